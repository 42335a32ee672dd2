package ddbjson

import (
	"bytes"
	"encoding/json"
	"testing"
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
