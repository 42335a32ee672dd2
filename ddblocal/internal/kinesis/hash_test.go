package kinesis

import (
	"math/big"
	"testing"
)

// TestK3_HashRangesCoverEveryHashKeyOnce: CreateStream's ranges of n
// shards start at 0, end at 2^128-1 and follow each other without a gap,
// each floor(2^128/n) wide but the last.
func TestK3_HashRangesCoverEveryHashKeyOnce(t *testing.T) {
	two128 := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, n := range []int{1, 2, 3, 7, 100} {
		rs := hashRanges(n)
		width := new(big.Int).Div(two128, big.NewInt(int64(n)))
		if rs[0][0] != (u128{}) || rs[n-1][1] != maxU128 {
			t.Errorf("n=%d: ranges from %s to %s", n, rs[0][0], rs[n-1][1])
		}
		for i := 0; i < n; i++ {
			if i > 0 && rs[i-1][1].add1() != rs[i][0] {
				t.Errorf("n=%d: range %d starts at %s, after %s", n, i, rs[i][0], rs[i-1][1])
			}
			w := new(big.Int).Sub(rs[i][1].big(), rs[i][0].big())
			w.Add(w, big.NewInt(1))
			if i < n-1 && w.Cmp(width) != 0 {
				t.Errorf("n=%d: range %d is %s wide, want %s", n, i, w, width)
			}
		}
	}
}

// TestK3_SequenceNumbersNameTheirShardAndSortAsNumbers: a sequence number
// reads back as its shard and counter, and within a shard the text sorts
// as the counter does.
func TestK3_SequenceNumbersNameTheirShardAndSortAsNumbers(t *testing.T) {
	a, b := formatSeq(7, 99), formatSeq(7, 100)
	if len(a) != 56 || a >= b {
		t.Errorf("%q then %q: want 56 digits, sorting as numbers", a, b)
	}
	shard, n, ok := parseSeq(b)
	if !ok || shard != 7 || n != 100 {
		t.Errorf("parseSeq(%q) = %d, %d, %v", b, shard, n, ok)
	}
	for _, bad := range []string{"", "12345", "5" + b[1:], b + "0"} {
		if _, _, ok := parseSeq(bad); ok {
			t.Errorf("parseSeq(%q) accepted", bad)
		}
	}
	if id := shardID(12); id != "shardId-000000000012" {
		t.Errorf("shardID(12) = %q", id)
	}
	if i, ok := shardIndex("shardId-000000000012"); !ok || i != 12 {
		t.Errorf("shardIndex = %d, %v", i, ok)
	}
	// the midpoint of a shard's range splits it in two non-empty halves
	lo, hi := u128{0, 10}, u128{0, 20}
	if m := midpoint(lo, hi); m != (u128{0, 16}) {
		t.Errorf("midpoint(10, 20) = %s, want 16", m)
	}
	if m := midpoint(u128{}, maxU128); m.String() != "170141183460469231731687303715884105728" {
		t.Errorf("midpoint of the whole range = %s, want 2^127", m)
	}
	if h, ok := parseU128("340282366920938463463374607431768211456"); ok {
		t.Errorf("parseU128(2^128) = %s, accepted", h)
	}
}
