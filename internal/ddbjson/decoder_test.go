package ddbjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// decodeSeeds are inputs of every shape the decoder meets: each type,
// nulls where encoding/json lets them through, duplicates, escapes,
// invalid UTF-8, type mismatches at every level, and broken JSON.
var decodeSeeds = []string{
	`{"s":{"S":"x"},"n":{"N":"-1.5e3"},"b":{"B":"AAE="},"t":{"BOOL":true},"f":{"BOOL":false},"z":{"NULL":true}}`,
	`{"m":{"M":{"in":{"L":[{"N":"1"},{"S":"2"},{"M":{}},{"L":[]}]}}},"ss":{"SS":["a","b"]},"ns":{"NS":["1","2"]},"bs":{"BS":["eA==",""]}}`,
	`{"a":{"S":null},"b":{"N":null},"c":{"B":null},"d":{"BOOL":null},"e":{"M":null},"f":{"L":null},"g":{"SS":null},"h":{"NS":[null,"1"]},"i":{"BS":[null]}}`,
	`{"a":{"NULL":null}}`, `{"a":null}`, `{"a":{}}`, `null`, ` {} `, `{"a":{"L":[null]}}`,
	`{"a":{"S":"x","S":"y"}}`, `{"a":{"S":1,"S":"y"}}`, `{"a":{"S":"y","S":1}}`, `{"a":{"S":"x","N":"1"}}`, `{"a":{"S":1,"N":"1"}}`,
	`{"a":{"S":"x"},"a":{"N":"1"}}`, `{"a":{"S":1},"a":{"N":"1"}}`, `{"a":{"N":"1"},"a":{"S":1}}`, `{"a":{"S":1},"b":{"S":2},"a":{"S":"ok"}}`,
	`{"a":{"\u0053":"x"}}`, `{"\u00e9\ud83d\ude00":{"S":"\u00e9\n\"q\""}}`, "{\"a\":{\"S\":\"\xff\xfe\"}}", `{"a":{"S":"\ud800"}}`,
	`{"a":{"X":1}}`, `{"a":{"X":1,"Y":2}}`, `{"a":{"":1}}`, `{"a":{"":1,"S":"x"}}`,
	`{"a":{"S":[]}}`, `{"a":{"S":{}}}`, `{"a":{"S":true}}`, `{"a":{"N":1}}`, `{"a":{"BOOL":"x"}}`, `{"a":{"NULL":false}}`, `{"a":{"NULL":1}}`,
	`{"a":{"M":1}}`, `{"a":{"M":[]}}`, `{"a":{"L":"x"}}`, `{"a":{"L":[1]}}`, `{"a":{"L":[{"S":1}]}}`, `{"a":{"SS":"x"}}`, `{"a":{"SS":[1]}}`,
	`{"a":{"BS":"x"}}`, `{"a":{"BS":[1]}}`, `{"a":{"BS":["!!"]}}`, `{"a":{"B":"!!"}}`, `{"a":{"B":"eA"}}`, `{"a":{"B":"e\nA=="}}`,
	`[1]`, `"x"`, `1`, `true`, ``, `{`, `{"a":`, `{"a":{"S":"x"}`, `{"a":{"S":"x"}} x`, `{"a":{"S":"x"},}`, `{"a":{"L":[{"S":"x"},]}}`,
	`{"a":{"N":"1"}, "b":{"NULL":false}, "c": }`, `{"a":{"L":[{"NULL":false}]},"b":[}`, `{"a":{"S":"x"}}}`, `{"a":{"S":"\x01"}}`,
	`{"a":{"N":01}}`, `{"a":{"X":-}}`, `{"a":{"X":1.}}`, `{"a":{"X":1e}}`, `{"a":{"X":tru}}`, `{"a":{"X":"\u12"}}`, `{"a":{"X":"\q"}}`,
	`{"a":{"L":[{"L":[{"L":[{"M":{"b":{"L":[{"S":"deep"}]}}}]}]}]}}`,
	// past the counts decoded without a scan ahead (8 list members or map
	// members, 16 set members): the rest counted, errors in it
	`{"l":{"L":[{"N":"1"},{"N":"2"},{"N":"3"},{"N":"4"},{"N":"5"},{"N":"6"},{"N":"7"},{"N":"8"},{"N":"9"},{"L":[]},{"S":"x"}]}}`,
	`{"l":{"L":[{"N":"1"},{"N":"2"},{"N":"3"},{"N":"4"},{"N":"5"},{"N":"6"},{"N":"7"},{"N":"8"},{"N":9},{"S":"x"}]}}`,
	`{"a":{"N":"1"},"b":{"N":"2"},"c":{"N":"3"},"d":{"N":"4"},"e":{"N":"5"},"f":{"N":"6"},"g":{"N":"7"},"h":{"N":"8"},"i":{"S":"9"},"a":{"S":"x"}}`,
	`{"m":{"M":{"a":{"N":"1"},"b":{"N":"2"},"c":{"N":"3"},"d":{"N":"4"},"e":{"N":"5"},"f":{"N":"6"},"g":{"N":"7"},"h":{"N":"8"},"i":{"S":1},"j":{"S":"y"}}}}`,
	`{"s":{"SS":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q",null,"r"]},"n":{"NS":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16",7]}}`,
	`{"l":{"L":[{"N":"1"},{"N":"2"},{"N":"3"},{"N":"4"},{"N":"5"},{"N":"6"},{"N":"7"},{"N":"8"},{"N":"9"},]}}`,
}

func sameError(t *testing.T, in []byte, got, want error, ref func([]byte) error) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%q: error %v, reference %v", in, got, want)
	}
	if got == nil {
		return
	}
	if !errors.Is(got, ErrBadAttributeValue) {
		t.Fatalf("%q: error %v does not match ErrBadAttributeValue", in, got)
	}
	var g, w *DecodeError
	errors.As(got, &g)
	errors.As(want, &w)
	if !json.Valid(in) || g.Kind == Syntax && w.Kind == Syntax {
		if got.Error() != want.Error() && (!json.Valid(in) || !ambiguous(in, want, ref)) {
			t.Fatalf("%q: error %q, reference %q", in, got, want)
		}
		return
	}
	if g.Kind != w.Kind && !ambiguous(in, want, ref) {
		t.Fatalf("%q: error kind %d (%v), reference %d (%v)", in, g.Kind, got, w.Kind, want)
	}
}

// ambiguous reports whether the reference reports errors other than want
// for the same input from run to run (it walks maps in random order).
func ambiguous(in []byte, want error, ref func([]byte) error) bool {
	for range 200 {
		if err := ref(in); err == nil || err.Error() != want.Error() {
			return true
		}
	}
	return false
}

func checkAgainstReference(t *testing.T, in []byte) {
	it, err := DecodeItem(in)
	rit, rerr := refDecodeItem(in)
	sameError(t, in, err, rerr, func(b []byte) error { _, err := refDecodeItem(b); return err })
	if err == nil && !reflect.DeepEqual(it, rit) {
		t.Fatalf("%q: item %#v, reference %#v", in, it, rit)
	}
	v, err := DecodeValue(in)
	rv, rerr := refDecodeValue(in)
	sameError(t, in, err, rerr, func(b []byte) error { _, err := refDecodeValue(b); return err })
	if err == nil && !reflect.DeepEqual(v, rv) {
		t.Fatalf("%q: value %#v, reference %#v", in, v, rv)
	}
}

func TestW6_OnePassDecoderAgreesWithTheReference(t *testing.T) {
	for _, s := range decodeSeeds {
		checkAgainstReference(t, []byte(s))
		if strings.HasPrefix(s, `{"a":`) && len(s) > len(`{"a":`) {
			checkAgainstReference(t, []byte(s[len(`{"a":`):len(s)-1]))
		}
	}
}

// FuzzDecodeMatchesReference: the one-pass decoder returns what the
// encoding/json-based reference returns, for any input.
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkAgainstReference(t, in) })
}

func TestW6_LimitsStopDecodingAtTheLimit(t *testing.T) {
	list := `{"L":[` + strings.Repeat(`{"N":"1"},`, 9999) + `{"N":"1"}]}`
	it := []byte(`{"pk":{"S":"k"},"l":` + list + `}`)
	// size: pk 2+1, l 1 + 3 + 10000*(1+1)
	if _, err := DecodeItemLimits(it, Limits{MaxItemSize: 20007}); err != nil {
		t.Fatalf("an item of exactly the limit: %v", err)
	}
	_, err := DecodeItemLimits(it, Limits{MaxItemSize: 20006})
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != TooLarge || de.Attr != "l" {
		t.Fatalf("an item one byte over: %v, want TooLarge in l", err)
	}
	vals := []byte(`{":a":{"S":"` + strings.Repeat("x", 100) + `"},":b":{"S":"` + strings.Repeat("x", 101) + `"}}`)
	_, err = DecodeItemLimits(vals, Limits{MaxValueSize: 100})
	if !errors.As(err, &de) || de.Kind != TooLarge || de.Attr != ":b" {
		t.Fatalf("a value one byte over: %v, want TooLarge in :b", err)
	}
	deep := `{"S":"x"}`
	for range 31 {
		deep = `{"L":[` + deep + `]}`
	}
	if _, err := DecodeItemLimits([]byte(`{"d":`+deep+`}`), Limits{MaxDepth: 32}); err != nil {
		t.Fatalf("32 levels: %v", err)
	}
	_, err = DecodeItemLimits([]byte(`{"d":{"M":{"x":`+deep+`}}}`), Limits{MaxDepth: 32})
	if !errors.As(err, &de) || de.Kind != TooDeep || de.Attr != "d" {
		t.Fatalf("33 levels: %v, want TooDeep in d", err)
	}
	// A duplicate name replaces the value it repeats, in the size too.
	dup := []byte(`{"a":{"S":"` + strings.Repeat("x", 90) + `"},"a":{"S":"` + strings.Repeat("y", 90) + `"}}`)
	if got, err := DecodeItemLimits(dup, Limits{MaxItemSize: 100}); err != nil || got["a"].Str[0] != 'y' {
		t.Fatalf("a duplicate attribute: %v, %v", got, err)
	}
}

func TestW6_DecodedSizeIsALowerBoundOfTheItemSize(t *testing.T) {
	for _, s := range decodeSeeds {
		it, err := DecodeItem([]byte(s))
		if err != nil {
			continue
		}
		n := 0
		for k, v := range it {
			n += len(k) + valueSize(v)
		}
		if _, err := DecodeItemLimits([]byte(s), Limits{MaxItemSize: n}); err != nil {
			t.Fatalf("%s: an item of its own decoded size %d refused: %v", s, n, err)
		}
		if n > 0 {
			if _, err := DecodeItemLimits([]byte(s), Limits{MaxItemSize: n - 1}); err == nil {
				t.Fatalf("%s: an item of decoded size %d accepted under a limit of %d", s, n, n-1)
			}
		}
	}
	_ = abi.Item{}
}

func depthOf(v abi.Value) int {
	d := 0
	for _, e := range v.List {
		d = max(d, depthOf(e))
	}
	for _, e := range v.Map {
		d = max(d, depthOf(e))
	}
	return d + 1
}

// FuzzDecodeItemLimits: with limits, the decoder returns what it returns
// without them, or a limit error for an item that is over a limit (or
// that does not decode at all).
func FuzzDecodeItemLimits(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s), uint16(20), uint16(10), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, itemMax, valueMax uint16, depthMax uint8) {
		lim := Limits{MaxItemSize: int(itemMax), MaxValueSize: int(valueMax), MaxDepth: int(depthMax)}
		got, err := DecodeItemLimits(in, lim)
		want, werr := DecodeItem(in)
		var de *DecodeError
		if errors.As(err, &de) && (de.Kind == TooLarge || de.Kind == TooDeep) {
			if werr != nil || hasDuplicateNames(in) {
				return // a limit stops decoding before the value a duplicate replaces
			}
			total, deepest, largest := 0, 0, 0
			for k, v := range want {
				total += len(k) + valueSize(v)
				deepest = max(deepest, depthOf(v))
				largest = max(largest, valueSize(v))
			}
			over := lim.MaxItemSize > 0 && total > lim.MaxItemSize || lim.MaxValueSize > 0 && largest > lim.MaxValueSize
			if de.Kind == TooDeep {
				over = lim.MaxDepth > 0 && deepest > lim.MaxDepth
			}
			if !over {
				t.Fatalf("%q under %+v: %v, but the item (size %d, largest value %d, depth %d) is within", in, lim, err, total, largest, deepest)
			}
			return
		}
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() && !ambiguous(in, werr, func(b []byte) error { _, err := DecodeItem(b); return err }) {
			t.Fatalf("%q under %+v: error %v, without limits %v", in, lim, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q under %+v: %#v, without limits %#v", in, lim, got, want)
		}
	})
}

// hasDuplicateNames reports whether any JSON object in b repeats a name.
func hasDuplicateNames(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		names  map[string]bool
		object bool
		key    bool // the next string token is a name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			name, _ := tok.(string)
			if top.names[name] {
				return true
			}
			top.names[name] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{names: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
