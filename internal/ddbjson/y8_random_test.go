package ddbjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// randomItems makes n random items of every type: strings with escapes
// and non-ASCII text, numbers as text, binaries, sets, and lists and maps
// of up to 24 members (either side of the counts the decoder decodes
// without a scan ahead) nested up to 32 levels.
func randomItems(seed uint64, n int) []abi.Item {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	items := make([]abi.Item, n)
	for i := range items {
		budget := 300 // values in all, so that nesting stays small
		items[i] = randomMap(r, 1+r.IntN(12), 1+r.IntN(32), &budget)
		if i%10 == 0 { // one value nested 32 levels: lists and maps in turn
			v := randomValue(r, 1, &budget)
			for level := 31; level > 0; level-- {
				if level%2 == 0 {
					v = abi.L(v)
				} else {
					v = abi.M(abi.Item{randomString(r, 3): v})
				}
			}
			items[i]["deep"] = v
		}
	}
	return items
}

var randomRunes = []rune("aZ09 _-.#:\"\\/<>&\n\t\u0001\u007féü日本\u2028😀")

func randomString(r *rand.Rand, max int) string {
	var sb strings.Builder
	for range r.IntN(max + 1) {
		if r.IntN(3) > 0 {
			sb.WriteByte(byte('a' + r.IntN(26)))
		} else {
			sb.WriteRune(randomRunes[r.IntN(len(randomRunes))])
		}
	}
	return sb.String()
}

func randomNumber(r *rand.Rand) string {
	s := strconv.FormatInt(r.Int64N(1e12)-5e11, 10)
	switch r.IntN(3) {
	case 0:
		s += "." + strconv.Itoa(r.IntN(1000))
	case 1:
		s += "E" + strconv.Itoa(r.IntN(40)-20)
	}
	return s
}

func randomBytes(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(20))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func randomMap(r *rand.Rand, n, depth int, budget *int) abi.Item {
	m := make(abi.Item, n)
	for range n {
		m[randomString(r, 10)] = randomValue(r, depth, budget)
	}
	return m
}

// randomValue is a value nested at most depth levels, of at most
// *budget values (less what it takes).
func randomValue(r *rand.Rand, depth int, budget *int) abi.Value {
	*budget--
	if depth > 1 && *budget > 0 && r.IntN(4) == 0 {
		if r.IntN(2) == 0 {
			l := make([]abi.Value, r.IntN(25))
			for i := range l {
				l[i] = randomValue(r, depth-1-r.IntN(2), budget)
			}
			if r.IntN(3) == 0 { // a chain to the deepest level
				l = append(l, randomValue(r, depth-1, budget))
			}
			return abi.L(l...)
		}
		return abi.M(randomMap(r, r.IntN(25), depth-1, budget))
	}
	if depth > 1 && r.IntN(8) == 0 {
		return abi.L(randomValue(r, depth-1, budget)) // deep nesting, one member a level
	}
	switch r.IntN(8) {
	case 0:
		return abi.N(randomNumber(r))
	case 1:
		return abi.B(randomBytes(r))
	case 2:
		return abi.Bool(r.IntN(2) == 0)
	case 3:
		return abi.Null()
	case 4:
		ss := make([]string, r.IntN(25))
		for i := range ss {
			ss[i] = randomString(r, 6)
		}
		return abi.SS(ss...)
	case 5:
		ns := make([]string, r.IntN(25))
		for i := range ns {
			ns[i] = randomNumber(r)
		}
		return abi.NS(ns...)
	case 6:
		bs := make([][]byte, r.IntN(20))
		for i := range bs {
			bs[i] = randomBytes(r)
		}
		return abi.BS(bs...)
	}
	return abi.S(randomString(r, 30))
}

// TestY8_DecoderAgreesWithTheReferenceOnRandomItems: random items, in
// compact JSON and indented, decode to themselves and to what the
// encoding/json reference decodes, through DecodeItem, DecodeValue,
// ItemDecoder and Answer; and the limits accept an item at exactly its
// size, depth and largest value, and refuse it one below.
func TestY8_DecoderAgreesWithTheReferenceOnRandomItems(t *testing.T) {
	items := randomItems(28, 100)
	if c := coverage(items); c.bigMaps == 0 || c.bigLists == 0 || c.bigSets == 0 || c.deepest < 32 {
		t.Fatalf("the random items miss a case: %+v", c)
	}
	var answer bytes.Buffer
	answer.WriteString(`{"Items":[`)
	for i, it := range items {
		compact, err := ItemToJSON(it)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			answer.WriteByte(',')
		}
		answer.Write(compact)
		var indented bytes.Buffer
		if err := json.Indent(&indented, compact, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		for _, in := range [][]byte{compact, indented.Bytes()} {
			got, err := DecodeItem(in)
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			if !abi.ItemsEqual(got, it) {
				t.Fatalf("%s: decoded %v, want %v", in, got, it)
			}
			want, err := refDecodeItem(in)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: decoded %#v, reference %#v (%v)", in, got, want, err)
			}
			var dec ItemDecoder
			if got, err := dec.Decode(in); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: ItemDecoder %#v (%v), reference %#v", in, got, err, want)
			}
			m, _ := ValueToJSON(abi.M(it))
			if v, err := DecodeValue(m); err != nil || !reflect.DeepEqual(v, abi.M(want)) {
				t.Fatalf("%s: DecodeValue %#v (%v)", m, v, err)
			}
		}
		checkLimitsAtTheBoundary(t, compact, it)
	}
	answer.WriteString(`]}`)
	got, err := answerItems(answer.Bytes())
	if err != nil || len(got) != len(items) {
		t.Fatalf("Answer: %d items, %v", len(got), err)
	}
	for i := range got {
		if !abi.ItemsEqual(got[i], items[i]) {
			t.Fatalf("Answer's item %d: %v, want %v", i, got[i], items[i])
		}
	}
}

type cover struct{ bigMaps, bigLists, bigSets, deepest int }

// coverage counts the items' maps and lists past the counts the decoder
// decodes without a scan ahead, its sets past theirs, and their deepest
// nesting.
func coverage(items []abi.Item) cover {
	var c cover
	var walk func(v abi.Value)
	walk = func(v abi.Value) {
		if len(v.Map) > smallMap {
			c.bigMaps++
		}
		if len(v.List) > smallList {
			c.bigLists++
		}
		if len(v.Strs) > smallSet {
			c.bigSets++
		}
		for _, e := range v.List {
			walk(e)
		}
		for _, e := range v.Map {
			walk(e)
		}
	}
	for _, it := range items {
		walk(abi.M(it))
		for _, v := range it {
			c.deepest = max(c.deepest, depthOf(v))
		}
	}
	return c
}

// checkLimitsAtTheBoundary: in is accepted with each limit at exactly
// what it has and refused with the limit one below (a TooLarge or
// TooDeep naming an attribute over it).
func checkLimitsAtTheBoundary(t *testing.T, in []byte, it abi.Item) {
	t.Helper()
	size, largest, deepest := 0, 0, 0
	for k, v := range it {
		size += len(k) + valueSize(v)
		largest = max(largest, valueSize(v))
		deepest = max(deepest, depthOf(v))
	}
	for _, c := range []struct {
		lim, over Limits
		kind      ErrorKind
		over1     func(attr string) bool
	}{
		{Limits{MaxItemSize: size}, Limits{MaxItemSize: size - 1}, TooLarge, nil},
		{Limits{MaxValueSize: largest}, Limits{MaxValueSize: largest - 1}, TooLarge,
			func(a string) bool { return valueSize(it[a]) == largest }},
		{Limits{MaxDepth: deepest}, Limits{MaxDepth: deepest - 1}, TooDeep,
			func(a string) bool { return depthOf(it[a]) == deepest }},
	} {
		above := c.lim // one above: each set limit + 1
		above.MaxItemSize += min(1, above.MaxItemSize)
		above.MaxValueSize += min(1, above.MaxValueSize)
		above.MaxDepth += min(1, above.MaxDepth)
		for _, lim := range []Limits{c.lim, above} {
			if got, err := DecodeItemLimits(in, lim); err != nil || !abi.ItemsEqual(got, it) {
				t.Fatalf("%s under %+v: %v", in, lim, err)
			}
		}
		if c.over.MaxItemSize < 0 || c.over.MaxValueSize < 0 || c.over.MaxDepth == 0 && c.kind == TooDeep ||
			c.over == (Limits{}) {
			continue // no limit below (0 is no limit)
		}
		_, err := DecodeItemLimits(in, c.over)
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != c.kind || c.over1 != nil && !c.over1(de.Attr) {
			t.Fatalf("%s under %+v: %v, want kind %d", in, c.over, err, c.kind)
		}
	}
}

// FuzzY8_RandomItemsMatchTheReference: TestY8_DecoderAgreesWithTheReferenceOnRandomItems's
// property for items from any seed.
func FuzzY8_RandomItemsMatchTheReference(f *testing.F) {
	f.Add(uint64(1))
	f.Fuzz(func(t *testing.T, seed uint64) {
		for _, it := range randomItems(seed, 3) {
			in, err := ItemToJSON(it)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeItem(in)
			want, werr := refDecodeItem(in)
			if err != nil || werr != nil || !reflect.DeepEqual(got, want) || !abi.ItemsEqual(got, it) {
				t.Fatalf("%s: %#v (%v), reference %#v (%v)", in, got, err, want, werr)
			}
			checkLimitsAtTheBoundary(t, in, it)
		}
	})
}
