package ddbjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestY8_AppendStringEscapesAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "é日本😀", "a\"b", "a\\b", "<>&", "\n\t\x01\x7f", "\u2028x\u2029", "bad\xffutf8", "/"} {
		var buf bytes.Buffer
		AppendString(&buf, s)
		want, _ := json.Marshal(s)
		if buf.String() != string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json: %s", s, buf.String(), want)
		}
	}
}

// TestY8_AppendStringEscapesRandomTextAsEncodingJSON: random strings of
// every byte class (plain ASCII, control bytes, " \\ < > &, multi-byte
// UTF-8, U+2028 and U+2029, bytes and truncated sequences that are not
// UTF-8) are written byte for byte as encoding/json writes them.
func TestY8_AppendStringEscapesRandomTextAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 28))
	pieces := []string{"a", "Z", " ", "/", "\"", "\\", "<", ">", "&", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f",
		"é", "日本", "😀", "\u2028", "\u2029", "\u2027", "\ufffd", "\xff", "\x80", "\xe2\x80", "\xf0\x9f\x98", "\xed\xa0\x80"}
	for range 20000 {
		var sb []byte
		for range r.IntN(12) {
			sb = append(sb, pieces[r.IntN(len(pieces))]...)
		}
		checkAppendString(t, string(sb))
	}
	for c := range 256 { // every byte alone and after a plain one
		checkAppendString(t, string([]byte{byte(c)}))
		checkAppendString(t, string([]byte{'x', byte(c), 'y'}))
	}
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("prefix")
	AppendString(&buf, s)
	want, _ := json.Marshal(s)
	if buf.String() != "prefix"+string(want) {
		t.Fatalf("AppendString(%q) = %s, encoding/json: %s", s, buf.String()[len("prefix"):], want)
	}
}

// FuzzAppendStringAsEncodingJSON: any string is written as encoding/json
// writes it.
func FuzzAppendStringAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "a<b", "\u2028", "\xff", "x\ny"} {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

func TestY8_DecodeListIsArrayOfDecodeItem(t *testing.T) {
	for _, in := range []string{`[]`, ` [ {"a":{"S":"x"}} , {"a":{"N":"1"},"m":{"M":{"a":{"L":[{"S":"y"}]}}}} ] `, `null`, `[{}]`} {
		var dec ItemDecoder
		got, err := dec.DecodeList([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want []abi.Item
		if err := Array([]byte(in), func(raw []byte) error {
			it, err := DecodeItem(raw)
			want = append(want, it)
			return err
		}); err != nil && in != `null` {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d items, want %d", in, len(got), len(want))
		}
		for i := range got {
			if !abi.ItemsEqual(got[i], want[i]) {
				t.Errorf("%s: item %d = %v, want %v", in, i, got[i], want[i])
			}
		}
	}
	for _, bad := range []string{`[{"a":{"S":1}}]`, `[{"a":{"S":"x"}}`, `{}`, `[{"a":{"S":"x"}}] x`} {
		var dec ItemDecoder
		if _, err := dec.DecodeList([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// BenchmarkAppendString writes a condition expression with a '<' (which
// encoding/json escapes as \u003c).
//
//	go test ./internal/ddbjson -run '^$' -bench AppendString -benchmem
func BenchmarkAppendString(b *testing.B) {
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		AppendString(&buf, "attribute_not_exists(#k) OR #v < :v")
	}
}
