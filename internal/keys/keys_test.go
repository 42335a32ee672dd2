package keys

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestKeys_SortedReadableAndDistinct(t *testing.T) {
	k := abi.Item{"sk": abi.S("OrderSummary"), "pk": abi.S("OrderSummary#o-1")}
	if got, want := String(k), "pk=OrderSummary#o-1,sk=OrderSummary"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if String(abi.Item{"pk": abi.B([]byte("a,b"))}) == String(abi.Item{"pk": abi.S("a,b")}) {
		t.Fatal("a binary value renders like a string")
	}
}

// TestKeys_StringIsTheSortedPairsForAnyKey compares String with the pairs
// sorted by name and joined, for keys of one to six attributes of every
// kind, with names given in any order.
func TestKeys_StringIsTheSortedPairsForAnyKey(t *testing.T) {
	vals := []abi.Value{abi.S("a,b=c"), abi.N("-1.5e3"), abi.B([]byte{0, '"', 0xff}), abi.S(""), abi.S("ø")}
	for n := 1; n <= 6; n++ {
		for seed := range 20 {
			k := abi.Item{}
			var names []string
			for i := range n {
				name := string(rune('z'-(i*7+seed)%26)) + strconv.Itoa(i%3)
				if _, ok := k[name]; ok {
					continue
				}
				k[name] = vals[(i+seed)%len(vals)]
				names = append(names, name)
			}
			sort.Strings(names)
			var parts []string
			for _, name := range names {
				v := k[name]
				s := v.Str
				if v.Kind == abi.KindB {
					s = strconv.Quote(string(v.Bytes))
				}
				parts = append(parts, name+"="+s)
			}
			if got, want := String(k), strings.Join(parts, ","); got != want {
				t.Fatalf("String(%v) = %q, want %q", k, got, want)
			}
		}
	}
}
