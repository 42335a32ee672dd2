package ddbjson

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// jsonValidSeeds are bodies valid and not, near each rule of the grammar.
var jsonValidSeeds = []string{
	``, ` `, `{}`, ` {} `, `{ }`, `[]`, `[ ]`, `{"a":1}`, `{"a" : 1 , "b":[1,2,{}]}`, `{"a":1,}`, `{,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`,
	`{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":1}}`, `{"a":1}]`, `[1]]`, `{"a":[1}`, `{"a":{]}`, `"x"`, `"x" "y"`, `1 2`, `{} {}`,
	`0`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `-`, `-.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `1.e5`, `+1`, `1.5e3.2`, `123456789012345678901234567890`,
	`true`, `false`, `null`, `tru`, `truex`, `nul`, `nulll`, `True`, `[true,false,null]`,
	`"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0041"`, `"\u00e9\uD83D\uDE00"`, `"\u004"`, `"\u004G"`, `"\x"`, `"\'"`, `"\`, `"\u"`, `"abc`,
	"\"a\tb\"", "\"a\x00b\"", "\"a\x1fb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"é\"", "\t\n\r {}\r\n", "\v{}", "\x00", "{}\x00",
	`{"TableName":"t","Key":{"pk":{"S":"a"},"sk":{"N":"1"}},"ConsistentRead":true}`,
	`{"Item":{"m":{"M":{"x":{"L":[{"S":"p"},{"BOOL":true},{"NULL":true}]}}}}}`,
}

// TestY8_JSONCheckAsEncodingJSON: Valid answers as json.Valid on
// bodies near each rule of the grammar, on thousands of random mutations
// of them, and at the nesting limit.
func TestY8_JSONCheckAsEncodingJSON(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
		if got, _ := ValidText(b); got != Valid(b) {
			t.Fatalf("ValidText(%q) = %v, Valid %v", b, got, !got)
		}
	}
	for _, s := range jsonValidSeeds {
		check([]byte(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "{}[],:\"\\ 0123456789.eE+-tfnulrsabu\x00\x1f\x7f\xff\t\n"
	for range 200_000 {
		b := []byte(jsonValidSeeds[r.IntN(len(jsonValidSeeds))])
		for range 1 + r.IntN(3) {
			switch k := r.IntN(3); {
			case k == 0 && len(b) > 0: // delete a byte
				i := r.IntN(len(b))
				b = append(b[:i], b[i+1:]...)
			case k == 1 && len(b) > 0: // replace one
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			default: // insert one
				i := r.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		check(b)
	}
	for _, n := range []int{9999, 10000, 10001} {
		check([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		check([]byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)))
		check([]byte(strings.Repeat("[", n-1) + "{}" + strings.Repeat("]", n-1)))
		check([]byte(strings.Repeat("[", n-1) + `[1,{"a":[]}]` + strings.Repeat("]", n-1)))
	}
}

// FuzzJSONCheckAsEncodingJSON: Valid agrees with json.Valid.
func FuzzJSONCheckAsEncodingJSON(f *testing.F) {
	for _, s := range jsonValidSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkJSONCheck: the check of a PutItem's body, json.Valid against
// Valid.
//
//	go test ./ddblocal -run '^$' -bench JSONCheck
func BenchmarkJSONCheck(b *testing.B) {
	body := []byte(`{"Item":{"count":{"N":"49"},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}},"name":{"S":"item-name-with-some-length"},"pk":{"S":"w3"},"sk":{"N":"7"},"tags":{"SS":["a","b","c"]}},"TableName":"cpu"}`)
	for _, c := range []struct {
		name  string
		valid func([]byte) bool
	}{{"encoding-json", json.Valid}, {"Valid", Valid}, {"ValidText", func(b []byte) bool { v, t := ValidText(b); return v && t }}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !c.valid(body) {
					b.Fatal("not valid")
				}
			}
		})
	}
}
