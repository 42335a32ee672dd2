package ddbjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// answerItems reads the Items of an answer with Answer.
func answerItems(in []byte) ([]abi.Item, error) {
	var items []abi.Item
	err := Answer(in, func(k []byte, v *Node) (err error) {
		if string(k) == "Items" {
			items, err = v.Items(items)
		}
		return err
	})
	return items, err
}

func TestY8_AnswerItemsAreDecodeListsItems(t *testing.T) {
	for _, list := range []string{`[]`, `null`, `[{}]`,
		` [ {"a":{"S":"x"}} , {"a":{"N":"1"},"m":{"M":{"a":{"L":[{"S":"y"}]}}}} ] `,
		`[{"a":{"S":"dup"},"a":{"N":"2"}},{"é":{"S":"日本\u00e9\n\"q\""},"b":{"B":"AAEC"},"bs":{"BS":["AA==",""]}}]`,
		`[{"s":{"SS":["a","b"]},"n":{"NS":["1","2.50"]},"l":{"L":[{"L":[{"NULL":true},{"BOOL":false}]},{"M":{}}]}}]`,
		answerList(40),
	} {
		in := []byte(`{"Count":2,"Items":` + list + `,"LastEvaluatedKey":null}`)
		got, err := answerItems(in)
		if err != nil {
			t.Fatalf("%s: %v", list, err)
		}
		var dec ItemDecoder
		want, err := dec.DecodeList([]byte(list))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d items, want %d", list, len(got), len(want))
		}
		for i := range got {
			if !abi.ItemsEqual(got[i], want[i]) {
				t.Errorf("%s: item %d = %v, want %v", list, i, got[i], want[i])
			}
		}
	}
	for _, bad := range []string{`{"Items":[{"a":{"S":1}}]}`, `{"Items":[{"a":{"S":"x"}}}`, `{"Items":{}}`,
		`{"Items":[]} x`, `[]`, `{"Items":[{"a":{"S":"x","N":"1"}}]}`, `{"Other":[1,}`} {
		if _, err := answerItems([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// answerList is a JSON array of n items with lists and sets, enough to
// fill more than one of the blocks lists and sets are carved from.
func answerList(n int) string {
	var rows []string
	for range n {
		rows = append(rows, `{"pk":{"S":"p"},"l":{"L":[{"S":"a"},{"N":"1"},{"L":[{"S":"b"}]}]},"ss":{"SS":["x","y","z"]}}`)
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// TestY8_AnswerItemsDoNotAliasTheInput: the items Answer returns keep
// their values when the caller reuses the input's buffer, and appending
// to one item's list or set never changes another's.
func TestY8_AnswerItemsDoNotAliasTheInput(t *testing.T) {
	in := []byte(`{"Items":` + answerList(40) + `}`)
	items, err := answerItems(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ItemToJSON(abi.M(abi.Item{"all": abi.L(itemsValues(items)...)}).Map)
	if err != nil {
		t.Fatal(err)
	}
	// the buffer reused: overwritten, then another answer read from it
	copy(in, bytes.Repeat([]byte{'x'}, len(in)))
	other := []byte(`{"Items":[{"pk":{"S":"q"},"l":{"L":[{"S":"c"},{"N":"9"},{"L":[{"S":"d"}]}]},"ss":{"SS":["u","v","w"]}}]}`)
	copy(in, other)
	if _, err := answerItems(in[:len(other)]); err != nil {
		t.Fatal(err)
	}
	for i := range items {
		items[i]["l"] = abi.Value{Kind: abi.KindL, List: append(items[i]["l"].List, abi.S("appended"))}
		items[i]["ss"] = abi.Value{Kind: abi.KindSS, Strs: append(items[i]["ss"].Strs, "appended")}
	}
	for i := range items {
		it := items[i]
		it["l"] = abi.Value{Kind: abi.KindL, List: it["l"].List[:3]}
		it["ss"] = abi.Value{Kind: abi.KindSS, Strs: it["ss"].Strs[:3]}
	}
	got, err := ItemToJSON(abi.M(abi.Item{"all": abi.L(itemsValues(items)...)}).Map)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the items changed:\n got %s\nwant %s", got, want)
	}
}

func itemsValues(items []abi.Item) []abi.Value {
	var vs []abi.Value
	for _, it := range items {
		vs = append(vs, abi.M(it))
	}
	return vs
}

// FuzzAnswerItemsMatchDecodeList: for any array of items, Answer's Items
// are DecodeList's, and one errs exactly when the other does.
func FuzzAnswerItemsMatchDecodeList(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `[{}]`, `[{"a":{"S":"x"},"a":{"N":"1"}}]`, answerList(3),
		`[{"a":{"L":[{"SS":["x"]},{"M":{"b":{"NULL":true}}}]},"é\u00e9":{"B":"AA=="}}]`, `[{"a":{"S":"x","N":"1"}}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, list []byte) {
		var dec ItemDecoder
		want, werr := dec.DecodeList(list)
		if !json.Valid(list) {
			// DecodeList's input is the array alone; Answer's is the
			// whole answer, which the list's tail can make valid
			// (`[],"":""`) or not
			return
		}
		got, gerr := answerItems([]byte(`{"Items":` + string(list) + `}`))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: DecodeList error %v, Answer error %v", list, werr, gerr)
		}
		if werr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d items, want %d", list, len(got), len(want))
		}
		for i := range got {
			if !abi.ItemsEqual(got[i], want[i]) {
				t.Fatalf("%q: item %d = %v, want %v", list, i, got[i], want[i])
			}
		}
	})
}

// TestY8_AnswerSizesEachItemsMap: a small item after a large one gets a
// map of its own size, not of the large one's.
func TestY8_AnswerSizesEachItemsMap(t *testing.T) {
	var attrs []string
	for i := range 100 {
		attrs = append(attrs, fmt.Sprintf(`"a%d":{"N":"%d"}`, i, i))
	}
	big, small := "{"+strings.Join(attrs, ",")+"}", `{"pk":{"S":"p"}}`
	var bigs, alternating []string
	for range 20 {
		bigs = append(bigs, big)
		alternating = append(alternating, big, small)
	}
	allocated := func(list []string) uint64 {
		in := []byte(`{"Items":[` + strings.Join(list, ",") + `]}`)
		items, err := answerItems(in)
		if err != nil || len(items) != len(list) || len(items[len(items)-1]) != strings.Count(list[len(list)-1], `":{"`) {
			t.Fatal(err, len(items))
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		for range 10 {
			_, _ = answerItems(in)
		}
		runtime.ReadMemStats(&ms)
		return (ms.TotalAlloc - before) / 10
	}
	// 20 small items of their own size take about 20 × 1.5 KB more than
	// the large ones alone; sized like the large one before them, 20 × 18 KB
	extra := int64(allocated(alternating)) - int64(allocated(bigs))
	if extra > 100_000 {
		t.Fatalf("20 one-attribute items after items of 100 took %d bytes more", extra)
	}
}
