package kinesis

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
)

// u128 is a 128-bit hash key: Kinesis maps a partition key to the MD5 of
// its UTF-8 bytes, read as a big-endian unsigned integer, and each shard
// takes a contiguous range of those.
type u128 struct{ hi, lo uint64 }

var maxU128 = u128{^uint64(0), ^uint64(0)}

func (a u128) cmp(b u128) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

func (a u128) add1() u128 {
	if a.lo == ^uint64(0) {
		return u128{a.hi + 1, 0}
	}
	return u128{a.hi, a.lo + 1}
}

func (a u128) sub1() u128 {
	if a.lo == 0 {
		return u128{a.hi - 1, ^uint64(0)}
	}
	return u128{a.hi, a.lo - 1}
}

func (a u128) big() *big.Int {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], a.hi)
	binary.BigEndian.PutUint64(b[8:], a.lo)
	return new(big.Int).SetBytes(b[:])
}

// String is the decimal text Kinesis uses for hash keys.
func (a u128) String() string { return a.big().String() }

func fromBig(b *big.Int) u128 {
	var buf [16]byte
	b.FillBytes(buf[:])
	return u128{binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:])}
}

// parseU128 reads a decimal hash key; false when it is not a number in
// [0, 2^128-1].
func parseU128(s string) (u128, bool) {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok || b.Sign() < 0 || b.BitLen() > 128 {
		return u128{}, false
	}
	return fromBig(b), true
}

// hashKey is the hash key of a partition key.
func hashKey(partitionKey string) u128 {
	sum := md5.Sum([]byte(partitionKey))
	return u128{binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])}
}

// hashRanges divides the hash key space into n equal ranges, the last one
// taking the remainder, as CreateStream does.
func hashRanges(n int) [][2]u128 {
	width := new(big.Int).Div(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(int64(n)))
	out := make([][2]u128, n)
	for i := range out {
		lo := new(big.Int).Mul(width, big.NewInt(int64(i)))
		out[i][0] = fromBig(lo)
		if i < n-1 {
			out[i][1] = fromBig(new(big.Int).Sub(new(big.Int).Add(lo, width), big.NewInt(1)))
		} else {
			out[i][1] = maxU128
		}
	}
	return out
}

// midpoint is the NewStartingHashKey that splits [lo, hi] in halves.
func midpoint(lo, hi u128) u128 {
	s := new(big.Int).Add(lo.big(), hi.big())
	return fromBig(s.Rsh(s, 1)).add1()
}

// Sequence numbers are 56 decimal digits, as Kinesis's: "4", the shard's
// index on 10 digits (so a number names its shard, and one used with
// another shard is refused as Kinesis refuses it), and the registry's
// counter on 45 digits, so that within a shard the text sorts as the
// number does.
const seqDigits = 56

func formatSeq(shard int, n uint64) string { return fmt.Sprintf("4%010d%045d", shard, n) }

// parseSeq reads a sequence number written by formatSeq.
func parseSeq(s string) (shard int, n uint64, ok bool) {
	if len(s) != seqDigits || s[0] != '4' {
		return 0, 0, false
	}
	idx, err := strconv.ParseUint(s[1:11], 10, 31)
	if err != nil {
		return 0, 0, false
	}
	n, err = strconv.ParseUint(s[11:], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return int(idx), n, true
}

func shardID(idx int) string { return fmt.Sprintf("shardId-%012d", idx) }

// shardIndex reads a shard id written by shardID.
func shardIndex(id string) (int, bool) {
	if len(id) != len("shardId-000000000000") || id[:8] != "shardId-" {
		return 0, false
	}
	n, err := strconv.ParseUint(id[8:], 10, 31)
	return int(n), err == nil
}
