package dynamo

import (
	"bytes"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

func TestY8_AKeyIsWrittenAsAppendItemWritesIt(t *testing.T) {
	keys := []abi.Item{
		{"pk": abi.S("a\"\u2028"), "sk": abi.N("1.0")},
		{"sk": abi.B([]byte{0, 1, 255}), "pk": abi.S("")},
		{"id": abi.S("x")},
		{"pk": abi.S("a"), "other": abi.S("b")}, // names other than the given: AppendItem's own order
		{"pk": abi.S("a")},                      // fewer
		{"pk": abi.S("plain text ~\x7f"), "sk": abi.N("-12.5e3")},
		{"pk": abi.S("é"), "sk": abi.N("1")},
		{"pk": abi.S("a<b"), "sk": abi.S("x&y>")},
		{"pk": abi.S("tab\t"), "sk": abi.S("")},
		{"pk": abi.N(""), "sk": abi.S("z")},
	}
	names := []string{"pk", "sk"}
	for i, k := range keys {
		var want, got bytes.Buffer
		want.WriteString("[")
		got.WriteString("[")
		if err := ddbjson.AppendItem(&want, k); err != nil {
			t.Fatal(err)
		}
		n := names
		if i == 2 {
			n = []string{"id"}
		}
		if err := appendKey(&got, k, n); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("key %d: appendKey wrote %s, AppendItem %s", i, got.String(), want.String())
		}
	}
}
