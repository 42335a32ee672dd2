package streams

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// A stored record is written by appendRecordJSON, byte for byte as
// encoding/json wrote its recordDisk before (so data dirs of either read
// the same), on records drawn with every kind of value, strings that
// encoding/json escapes, empty and absent images, and identities.
func TestY8_AppendRecordJSONIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 8))
	strs := []string{"", "a", "plain text", `quote " and \ backslash`, "<html> & 'amp'", "tab\tnew\nline\x01", "é ünïcödé 日本", "\u2028\u2029", "emoji 😀", "\x7f"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	var value func(depth int) abi.Value
	value = func(depth int) abi.Value {
		k := rng.IntN(10)
		if depth > 2 && k >= 8 {
			k = 0
		}
		switch k {
		case 0:
			return abi.S(str())
		case 1:
			return abi.N(strconv.Itoa(rng.IntN(2000) - 1000))
		case 2:
			return abi.B([]byte(str()))
		case 3:
			return abi.Bool(rng.IntN(2) == 0)
		case 4:
			return abi.Null()
		case 5:
			return abi.SS(str(), str()+"x")
		case 6:
			return abi.NS("1", "-2.5", "3e10")
		case 7:
			return abi.Value{Kind: abi.KindBS, Blobs: [][]byte{[]byte(str()), {0, 255}}}
		case 8:
			m := map[string]abi.Value{}
			for range rng.IntN(4) {
				m[str()] = value(depth + 1)
			}
			return abi.M(m)
		default:
			var l []abi.Value
			for range rng.IntN(4) {
				l = append(l, value(depth+1))
			}
			return abi.L(l...)
		}
	}
	item := func() abi.Item {
		switch rng.IntN(5) {
		case 0:
			return nil
		case 1:
			return abi.Item{}
		}
		it := abi.Item{}
		for range 1 + rng.IntN(6) {
			it[str()] = value(0)
		}
		return it
	}
	events := []string{"INSERT", "MODIFY", "REMOVE", "", "odd <name>"}
	for i := range 3000 {
		rec := &record{eventName: events[rng.IntN(len(events))], keys: item(), oldImage: item(), newImage: item(), size: rng.IntN(1 << 20)}
		if rng.IntN(3) > 0 {
			rec.at = time.Unix(0, rng.Int64())
		}
		if rng.IntN(4) == 0 {
			rec.identity = &Identity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
		}
		want, err := json.Marshal(recordDisk{N: rec.eventName, T: rec.at.UnixNano(), K: wire.Item(rec.keys), O: wire.Item(rec.oldImage),
			I: wire.Item(rec.newImage), U: rec.identity, Z: rec.size})
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRecordJSON([]byte("prefix"), rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got[len("prefix"):], want)
		}
	}
}
