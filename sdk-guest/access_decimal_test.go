package guest

import (
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// accessorCases are number texts at the edges of Event.Decimal's fast
// path: signs, points, zeros, 19 and 20 digits, exponents, DynamoDB's
// range, and texts that are not numbers.
var accessorCases = []string{
	"0", "-0", "0.000", "12.5", "12.50", "-12.5", "1200", "0.05", "-0.0500",
	"1", "9999999999999999999", "10000000000000000000", "0000000000000000012",
	"00000000000000000012", "1e5", "1E-5", "+1", "1.", ".5", "-.5", "1.2.3",
	"", "-", ".", "abc", "1a", "١٢", "0." + strings.Repeat("0", 129) + "1",
	"0." + strings.Repeat("0", 130) + "1", "1" + strings.Repeat("0", 107),
	"1" + strings.Repeat("0", 126), "123456789012345678" + strings.Repeat("0", 108),
	" 1", "1 ", "--1", "1e", "1e+", strings.Repeat("9", 130),
}

// TestW2_DecimalAccessorAgreesWithTheGeneralParser reads each case through
// Event.Decimal, whose common case is parsed inline, and through the
// general lookup and parser: the value and the verdict are the same, for
// the attribute alone, after other attributes of every kind, as the wrong
// kind, and absent.
func TestW2_DecimalAccessorAgreesWithTheGeneralParser(t *testing.T) {
	long := strings.Repeat("k", 200)
	for _, text := range accessorCases {
		items := map[string]abi.Item{
			"alone":        {"price": abi.N(text)},
			"after others": {"_tag": abi.S("ItemAdded"), "a": abi.B([]byte("xy")), "b": abi.Value{Kind: abi.KindBOOL, Bool: true}, "c": abi.Value{Kind: abi.KindNULL}, "price": abi.N(text), "sku": abi.S("sku-1")},
			"after a list": {"a": abi.Value{Kind: abi.KindL, List: []abi.Value{abi.S("x")}}, "price": abi.N(text)},
			"long name":    {long: abi.S("x"), "price": abi.N(text)},
			"long value":   {"a": abi.S(long), "price": abi.N(text)},
			"as a string":  {"price": abi.S(text)},
			"absent":       {"prices": abi.N(text)},
		}
		for what, it := range items {
			e := NewEvent(abi.Event{Data: it})
			got, gotOK := e.Decimal("price")
			want, wantOK := decimalSlow(e.data, "price")
			if got != want || gotOK != wantOK {
				t.Errorf("%q %s: Decimal = %v %v, the general path %v %v", text, what, got, gotOK, want, wantOK)
			}
		}
	}
	var none Event
	if _, ok := none.Decimal("price"); ok {
		t.Error("an event without data has a price")
	}
}

// FuzzDecimalAccessor checks Event.Decimal against the general path for
// any text and any attribute before it.
func FuzzDecimalAccessor(f *testing.F) {
	for _, c := range accessorCases {
		f.Add(c, "sku-1")
	}
	f.Fuzz(func(t *testing.T, text, other string) {
		e := NewEvent(abi.Event{Data: abi.Item{"a": abi.S(other), "price": abi.N(text)}})
		got, gotOK := e.Decimal("price")
		want, wantOK := decimalSlow(e.data, "price")
		if got != want || gotOK != wantOK {
			t.Fatalf("%q after %q: Decimal = %v %v, the general path %v %v", text, other, got, gotOK, want, wantOK)
		}
	})
}
