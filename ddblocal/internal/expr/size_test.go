package expr

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestConformance_ExprItemSize(t *testing.T) {
	cases := []struct {
		item abi.Item
		want int
	}{
		{abi.Item{"a": abi.S("hello")}, 1 + 5},
		{abi.Item{"é": abi.S("é")}, 2 + 2},
		{abi.Item{"n": abi.N("123")}, 1 + 3},           // 3 digits: 2 bytes + 1
		{abi.Item{"n": abi.N("1000000")}, 1 + 2},       // trailing zeros trimmed: 1 digit
		{abi.Item{"n": abi.N("0.0012")}, 1 + 2},        // leading zeros trimmed: 2 digits
		{abi.Item{"b": abi.B([]byte{1, 2, 3})}, 1 + 3}, //
		{abi.Item{"t": abi.Bool(true), "z": abi.Null()}, 1 + 1 + 1 + 1},
		{abi.Item{"l": abi.L()}, 1 + 3},
		{abi.Item{"l": abi.L(abi.S("ab"), abi.Null())}, 1 + 3 + (1 + 2) + (1 + 1)},
		{abi.Item{"m": abi.M(map[string]abi.Value{"k": abi.S("v")})}, 1 + 3 + 1 + 1 + 1},
		{abi.Item{"ss": abi.SS("a", "bc")}, 2 + 3},
		{abi.Item{"ns": abi.NS("1", "22")}, 2 + 2 + 2},
		{abi.Item{"bs": abi.BS([]byte{1}, []byte{2, 3})}, 2 + 3},
	}
	for _, c := range cases {
		if got := ItemSize(c.item); got != c.want {
			t.Errorf("ItemSize(%v) = %d, want %d", c.item, got, c.want)
		}
	}
}

func TestConformance_ExprValidateValue(t *testing.T) {
	const pre = "One or more parameter values were invalid: "
	cases := []struct {
		v   abi.Value
		msg string
	}{
		{abi.Value{}, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"},
		{abi.SS(), pre + "An string set  may not be empty"},
		{abi.NS(), pre + "An number set  may not be empty"},
		{abi.BS(), pre + "Binary sets should not be empty"},
		{abi.SS("a", "a"), pre + "Input collection [a, a] contains duplicates."},
		{abi.BS([]byte("b"), []byte("b")), pre + "Input collection [Yg==, Yg==]of type BS contains duplicates."},
		{abi.NS("1", "1.0"), "Input collection contains duplicates"},
		{abi.NS("1", "b"), "The parameter cannot be converted to a numeric value: b"},
		{abi.N("1e126"), msgOverflow},
		{abi.L(abi.N("x")), "The parameter cannot be converted to a numeric value: x"},
		{abi.M(map[string]abi.Value{"k": abi.SS()}), pre + "An string set  may not be empty"},
	}
	for _, c := range cases {
		wantValidation(t, ValidateValue(c.v), c.msg)
	}
	for _, v := range []abi.Value{abi.S(""), abi.B(nil), abi.N("1"), abi.SS("a", "b"), abi.L(abi.M(nil)), abi.Null()} {
		if err := ValidateValue(v); err != nil {
			t.Errorf("ValidateValue(%v): %v", v, err)
		}
	}
}

func deepMap(n int) abi.Value {
	v := abi.S("leaf")
	for i := 0; i < n; i++ {
		v = abi.M(map[string]abi.Value{"n": v})
	}
	return v
}

func TestConformance_ExprNesting(t *testing.T) {
	if err := ValidateValue(deepMap(31)); err != nil {
		t.Fatalf("31 levels: %v", err)
	}
	wantValidation(t, ValidateValue(deepMap(32)), msgNesting)
	wantValidation(t, ValidateValue(abi.L(deepMap(31))), msgNesting)
	if err := CheckNesting(abi.Item{"a": deepMap(31)}); err != nil {
		t.Fatal(err)
	}
	wantValidation(t, CheckNesting(abi.Item{"a": deepMap(32)}), msgNesting)
}

func TestConformance_ExprParamsValidateValues(t *testing.T) {
	p := NewParams(nil, map[string]abi.Value{":a": abi.N("1"), ":b": abi.SS()})
	wantValidation(t, p.ValidateValues(), "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An string set  may not be empty for key :b")
	p = NewParams(nil, map[string]abi.Value{":n": abi.N("1e200")})
	wantValidation(t, p.ValidateValues(), "ExpressionAttributeValues contains invalid value: "+msgOverflow+" for key :n")
	if err := testParams().ValidateValues(); err != nil {
		t.Fatal(err)
	}
}
