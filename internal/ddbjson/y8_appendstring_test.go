package ddbjson

import (
	"bytes"
	"encoding/json"
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
