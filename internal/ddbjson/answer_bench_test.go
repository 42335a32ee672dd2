package ddbjson

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// answer10 is a Query answer of 10 rows of BenchmarkClientRequest's shape
// (key, a few scalars, a set, a nested map with a list).
func answer10() []byte {
	var rows []string
	for i := range 10 {
		rows = append(rows, `{"count":{"N":"`+strconv.Itoa(i*7)+`"},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}},`+
			`"name":{"S":"item-name-with-some-length"},"pk":{"S":"p"},"sk":{"N":"`+strconv.Itoa(i)+`"},"tags":{"SS":["a","b","c"]}}`)
	}
	return []byte(`{"Count":10,"Items":[` + strings.Join(rows, ",") + `],"ScannedCount":10}`)
}

// BenchmarkAnswer decodes answer10: Answer (one pass, shared strings),
// the walker with ItemDecoder.DecodeList it replaces on the host's wire
// path, and floor: only what any decoder into abi items must allocate,
// the 20 maps (each item's and its nested map's) filled with values whose
// strings and slices already exist; wide is Answer on 10 items of 12
// attributes (wider than a small map), wide-nested the same with 11 of
// them in a nested map.
//
//	go test ./internal/ddbjson -run '^$' -bench Answer -benchmem
func BenchmarkAnswer(b *testing.B) {
	in := answer10()
	b.Run("answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var items []abi.Item
			err := Answer(in, func(k []byte, v *Node) (err error) {
				if string(k) == "Items" {
					items, err = v.Items(items)
				}
				return err
			})
			if err != nil || len(items) != 10 {
				b.Fatal(err, len(items))
			}
		}
	})
	b.Run("walk+DecodeList", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var items []abi.Item
			err := Object(in, func(k, v []byte) (err error) {
				if string(k) == "Items" {
					var dec ItemDecoder
					items, err = dec.DecodeList(v)
				}
				return err
			})
			if err != nil || len(items) != 10 {
				b.Fatal(err, len(items))
			}
		}
	})
	// wide: 10 items of 12 attributes, wider than a small map (see
	// TestY8_WideItemsAreMadeOnce)
	for _, wide := range []struct {
		name string
		in   []byte
	}{{"wide", wideAnswer(10, 12)}, {"wide-nested", wideNestedAnswer(10, 12)}} {
		b.Run(wide.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if items, err := answerItems(wide.in); err != nil || len(items) != 10 {
					b.Fatal(err, len(items))
				}
			}
		})
	}
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		names := []string{"count", "doc", "name", "pk", "sk", "tags", "x", "y", "z"}
		tags, list := []string{"a", "b", "c"}, []abi.Value{abi.S("p"), abi.S("q")}
		var sink []abi.Item
		for b.Loop() {
			items := make([]abi.Item, 0, 10)
			for i := range 10 {
				doc := make(abi.Item, 8)
				doc[names[6]], doc[names[7]], doc[names[8]] = abi.N("1"), abi.S("why"), abi.Value{Kind: abi.KindL, List: list}
				it := make(abi.Item, 8)
				it[names[0]], it[names[1]], it[names[2]] = abi.N(names[i%3]), abi.M(doc), abi.S(names[2])
				it[names[3]], it[names[4]], it[names[5]] = abi.S("p"), abi.N(names[4]), abi.Value{Kind: abi.KindSS, Strs: tags}
				items = append(items, it)
			}
			sink = items
		}
		_ = sink
	})
}
