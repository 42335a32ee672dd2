package dynamo

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

func TestY8_PlainIntegersAreTheirOwnCanonicalText(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "007", "-007", "1e3", "1.0", "", "-", "123456789012345678901234567890", "12345678901234567890123456789012345678", "+5"} {
		r, ok := new(big.Rat).SetString(s)
		canonical := ok && r.RatString() == s
		if plainInt(s) && !canonical {
			t.Errorf("plainInt(%q) = true, but big.Rat writes it %q", s, r.RatString())
		}
	}
	for _, s := range []string{"0", "7", "-12", "123456789012345678901234567890"} {
		if !plainInt(s) {
			t.Errorf("plainInt(%q) = false", s)
		}
	}
}

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
