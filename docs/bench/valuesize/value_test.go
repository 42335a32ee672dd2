// Package valuesize measures what filling an answer's items costs with
// abi.Value's layout (128 bytes) and two smaller layouts a public-type
// change could give (80 bytes: sets as lists; 56: bytes in a string too):
// issue 28's reads, BENCHMARKS.md.
//
//	go test ./docs/bench/valuesize -run '^$' -bench Fill -benchtime 50000x -count 3
package valuesize

import (
	"strconv"
	"testing"
)

// V128 is abi.Value as it is.
type V128 struct {
	Kind  uint8
	Bool  bool
	Str   string
	Bytes []byte
	Map   map[string]V128
	List  []V128
	Strs  []string
	Blobs [][]byte
}

// V80 is abi.Value with sets held as lists.
type V80 struct {
	Kind  uint8
	Bool  bool
	Str   string
	Bytes []byte
	Map   map[string]V80
	List  []V80
}

// V56 is V80 with binary values held in Str.
type V56 struct {
	Kind uint8
	Bool bool
	Str  string
	Map  map[string]V56
	List []V56
}

var names = []string{"pk", "sk", "name", "count", "tags", "doc"}
var sink any

// BenchmarkFill fills the ten items of BenchmarkClientRequest's Query
// answer (six attributes, a string set, a nested map of three with a
// list) in each layout, as a decoder would.
func BenchmarkFill(b *testing.B) {
	strs := make([]string, 100)
	for i := range strs {
		strs[i] = "s" + strconv.Itoa(i)
	}
	b.Run("128", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			items := make([]map[string]V128, 10)
			for i := range items {
				m := make(map[string]V128, 6)
				for j, n := range names[:4] {
					m[n] = V128{Kind: 1, Str: strs[i+j]}
				}
				m["tags"] = V128{Kind: 2, Strs: []string{"a", "b", "c"}}
				d := make(map[string]V128, 3)
				d["x"] = V128{Kind: 1, Str: "1"}
				d["y"] = V128{Kind: 1, Str: "why"}
				d["z"] = V128{Kind: 3, List: []V128{{Kind: 1, Str: "p"}, {Kind: 1, Str: "q"}}}
				m["doc"] = V128{Kind: 4, Map: d}
				items[i] = m
			}
			sink = items
		}
	})
	b.Run("80", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			items := make([]map[string]V80, 10)
			for i := range items {
				m := make(map[string]V80, 6)
				for j, n := range names[:4] {
					m[n] = V80{Kind: 1, Str: strs[i+j]}
				}
				m["tags"] = V80{Kind: 2, List: []V80{{Kind: 1, Str: "a"}, {Kind: 1, Str: "b"}, {Kind: 1, Str: "c"}}}
				d := make(map[string]V80, 3)
				d["x"] = V80{Kind: 1, Str: "1"}
				d["y"] = V80{Kind: 1, Str: "why"}
				d["z"] = V80{Kind: 3, List: []V80{{Kind: 1, Str: "p"}, {Kind: 1, Str: "q"}}}
				m["doc"] = V80{Kind: 4, Map: d}
				items[i] = m
			}
			sink = items
		}
	})
	b.Run("56", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			items := make([]map[string]V56, 10)
			for i := range items {
				m := make(map[string]V56, 6)
				for j, n := range names[:4] {
					m[n] = V56{Kind: 1, Str: strs[i+j]}
				}
				m["tags"] = V56{Kind: 2, List: []V56{{Kind: 1, Str: "a"}, {Kind: 1, Str: "b"}, {Kind: 1, Str: "c"}}}
				d := make(map[string]V56, 3)
				d["x"] = V56{Kind: 1, Str: "1"}
				d["y"] = V56{Kind: 1, Str: "why"}
				d["z"] = V56{Kind: 3, List: []V56{{Kind: 1, Str: "p"}, {Kind: 1, Str: "q"}}}
				m["doc"] = V56{Kind: 4, Map: d}
				items[i] = m
			}
			sink = items
		}
	})
}
