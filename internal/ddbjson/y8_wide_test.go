package ddbjson

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// wideAnswer is a Query answer of n items of attrs attributes each (a key
// and attrs-2 strings).
func wideAnswer(n, attrs int) []byte {
	var rows []string
	for i := range n {
		var b strings.Builder
		b.WriteString(`{"pk":{"S":"p"},"sk":{"N":"` + strconv.Itoa(i) + `"}`)
		for a := 2; a < attrs; a++ {
			b.WriteString(`,"attr` + strconv.Itoa(a) + `":{"S":"value-` + strconv.Itoa(a) + `"}`)
		}
		b.WriteString("}")
		rows = append(rows, b.String())
	}
	return []byte(`{"Count":` + strconv.Itoa(n) + `,"Items":[` + strings.Join(rows, ",") + `],"ScannedCount":10}`)
}

// wideNestedAnswer is wideAnswer with each item's attributes but pk in a
// nested map, data.
func wideNestedAnswer(n, attrs int) []byte {
	return []byte(strings.NewReplacer(`{"pk":{"S":"p"},"sk"`, `{"pk":{"S":"p"},"data":{"M":{"sk"`, `"}}`, `"}}}}`).
		Replace(string(wideAnswer(n, attrs))))
}

// TestY8_WideItemsAfterWideItemsDecodeAsBefore: random items of every
// type (numbers as text, sets, binaries, nesting to 32 levels), in runs of
// items wider than a small map and narrower ones in every order, decode
// through Answer to themselves and to what the encoding/json reference
// decodes, and an answer with a bad or duplicated member in a wide item
// after a wide one fails or decodes as ItemDecoder.DecodeList does.
func TestY8_WideItemsAfterWideItemsDecodeAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 8))
	var items []abi.Item
	deep := randomItems(31, 10) // every tenth nested 32 levels deep
	for run := range 40 {
		for range 1 + r.IntN(4) {
			n := 1 + r.IntN(smallMap)
			if run%2 == 0 {
				n = smallMap + 1 + r.IntN(40)
			}
			budget := 200
			it := randomMap(r, n, 1+r.IntN(32), &budget)
			if r.IntN(5) == 0 {
				it["deep"] = deep[0]["deep"]
			}
			if r.IntN(2) == 0 { // a nested map, wide in every other run
				w := 1 + r.IntN(smallMap)
				if run%4 < 2 {
					w = smallMap + 1 + r.IntN(30)
				}
				it["data"] = abi.M(randomMap(r, w, 1+r.IntN(8), &budget))
			}
			if r.IntN(4) == 0 { // a list of maps, wide and narrow
				var l []abi.Value
				for range r.IntN(6) {
					l = append(l, abi.M(randomMap(r, 1+r.IntN(3*smallMap), 1+r.IntN(4), &budget)))
				}
				it["maps"] = abi.L(l...)
			}
			items = append(items, it)
		}
	}
	if c := coverage(items); c.bigMaps < 100 || c.deepest < 32 {
		t.Fatalf("the random items miss a case: %+v", c)
	}
	var answer bytes.Buffer
	answer.WriteString(`{"Count":1,"Items":[`)
	for i, it := range items {
		if i > 0 {
			answer.WriteByte(',')
		}
		in, err := ItemToJSON(it)
		if err != nil {
			t.Fatal(err)
		}
		answer.Write(in)
	}
	answer.WriteString(`],"ScannedCount":1}`)
	got, err := answerItems(answer.Bytes())
	if err != nil || len(got) != len(items) {
		t.Fatalf("Answer: %d items, %v", len(got), err)
	}
	for i := range got {
		in, _ := ItemToJSON(items[i])
		want, err := refDecodeItem(in)
		if err != nil || !reflect.DeepEqual(got[i], want) || !abi.ItemsEqual(got[i], items[i]) {
			t.Fatalf("item %d: %#v, reference %#v (%v)", i, got[i], want, err)
		}
	}

	wide := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{"pk":{"S":"p"}`)
		for a := range smallMap + 2 {
			b.WriteString(`,"a` + strconv.Itoa(a) + `":{"N":"` + strconv.Itoa(a) + `"}`)
		}
		return b.String() + extra + "}"
	}
	nested := func(extra string) string { return `{"pk":{"S":"p"},"m":{"M":` + wide(extra) + `}}` }
	for _, second := range []string{
		nested(`,"a3":{"S":"again"}`), nested(`,"bad":{"S":1}`), nested(`,"bad":{"BOOL":"x"}`), nested(""),
		`{"pk":{"S":"p"},"m":{"M":{}}}`, `{"pk":{"S":"p"},"m":{"L":[` + wide("") + `,` + wide(`,"x":{"NULL":true}`) + `]}}`,
		wide(`,"a3":{"S":"again"},"a5":{"S":"again"}`), // duplicates: the last one kept
		wide(`,"bad":{"S":1}`), wide(`,"bad":{"N":"x"}`), wide(`,"bad":{"S":"x","N":"1"}`), wide(`,"bad"`),
		wide(`,"l":{"L":[` + strings.Repeat(`{"S":"x"},`, 30) + `{"S":"y"}]}`),
		`{"pk":{"S":"narrow"}}`, `{}`,
	} {
		list := `[` + nested("") + `,` + second + `,` + nested("") + `]`
		if !strings.Contains(second, `"m"`) {
			list = `[` + wide("") + `,` + second + `,` + wide("") + `]`
		}
		var dec ItemDecoder
		want, werr := dec.DecodeList([]byte(list))
		got, gerr := answerItems([]byte(`{"Items":` + list + `}`))
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: DecodeList error %v, Answer error %v", list, werr, gerr)
		}
		if werr == nil && (len(got) != 3 || !abi.ItemsEqual(got[1], want[1]) || !abi.ItemsEqual(got[2], want[2])) {
			t.Fatalf("%s: %v, want %v", list, got, want)
		}
	}
}

// TestY8_WideItemsAreMadeOnce: an answer's items wider than a small map
// each take one map made at their size (a header, a directory, a table
// and its groups), not a small map filled first and made again.
func TestY8_WideItemsAreMadeOnce(t *testing.T) {
	in := wideAnswer(10, 12)
	allocs := testing.AllocsPerRun(20, func() {
		if items, err := answerItems(in); err != nil || len(items) != 10 || len(items[9]) != 12 {
			t.Fatal(err)
		}
	})
	// the answer's copy, the decoder, the items' slice and the names'
	// block (4); the first item made twice (2 + 4); nine at their size (4
	// each): 46. Each made twice: 64.
	if allocs > 48 {
		t.Fatalf("10 items of 12 attributes took %.0f allocations, want at most 48", allocs)
	}
	// the same with 11 of each item's attributes in a nested map beside
	// its key: each item's own small map (2) and the nested map at its
	// size (4), the first made twice: 66. Each made twice: 84.
	in = wideNestedAnswer(10, 12)
	allocs = testing.AllocsPerRun(20, func() {
		items, err := answerItems(in)
		if err != nil || len(items) != 10 || len(items[9]["data"].Map) != 11 {
			t.Fatal(err, string(in))
		}
	})
	if allocs > 68 {
		t.Fatalf("10 items of a nested map of 11 attributes took %.0f allocations, want at most 68", allocs)
	}
}

// An item decoded at a position told the last one was wide decodes as
// DecodeItemAt decodes it, whether it is wide or not, and says whether it
// is; a wide item told so is made once (fewer allocations).
func TestY8_DecodeItemAtWideDecodesAsDecodeItemAt(t *testing.T) {
	for i, it := range randomItems(31, 300) {
		var enc bytes.Buffer
		if err := AppendItem(&enc, it); err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"Item":` + enc.String() + `,"TableName":"t"}`)
		want, wantEnd, err := DecodeItemAt(body, 8, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, hint := range []bool{false, true} {
			got, end, wide, err := DecodeItemAtWide(body, 8, Limits{}, hint)
			if err != nil || end != wantEnd || !reflect.DeepEqual(got, want) {
				t.Fatalf("item %d, told wide %v: %v, end %d (want %d), differs: %v", i, hint, err, end, wantEnd, !reflect.DeepEqual(got, want))
			}
			if wide != (len(want) > smallMap) {
				t.Fatalf("item %d of %d attributes: wide %v", i, len(want), wide)
			}
		}
	}
	wide := wideAnswer(1, 12)
	at := bytes.IndexByte(wide[1:], '{') + 1 // the item, inside the answer's list
	once := testing.AllocsPerRun(20, func() { _, _, _, _ = DecodeItemAtWide(wide, at, Limits{}, true) })
	twice := testing.AllocsPerRun(20, func() { _, _, _, _ = DecodeItemAtWide(wide, at, Limits{}, false) })
	if once >= twice {
		t.Fatalf("a wide item told so took %.0f allocations, not fewer than %.0f", once, twice)
	}
}
