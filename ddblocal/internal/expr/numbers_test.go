package expr

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestConformance_ExprNormalizeNumber(t *testing.T) {
	ok := []struct{ in, want string }{
		{"3", "3"}, {"-7.1234", "-7.1234"}, {"-17e5", "-1700000"}, {"-17.4E37", "-174000000000000000000000000000000000000"},
		{"+3", "3"}, {".123", "0.123"}, {"0001.23", "1.23"}, {"1e+5", "100000"}, {"0e1000", "0"},
		{"1.50", "1.5"}, {"-0", "0"}, {"0.000", "0"}, {"100", "100"}, {"1E-130", "0." + zeros(129) + "1"},
		{"9.9999999999999999999999999999999999999E+125", "99999999999999999999999999999999999999" + zeros(88)},
		{"3.1415926535897932384626433832795028841", "3.1415926535897932384626433832795028841"},
		{"31415926535897932384626433832795028841e30", "31415926535897932384626433832795028841" + zeros(30)},
		{"5.", "5"},
	}
	for _, c := range ok {
		got, err := NormalizeNumber(c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeNumber(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"NaN", "The parameter cannot be converted to a numeric value: NaN"},
		{"Infinity", "The parameter cannot be converted to a numeric value: Infinity"},
		{"-Infinity", "The parameter cannot be converted to a numeric value: -Infinity"},
		{"dog", "The parameter cannot be converted to a numeric value: dog"},
		{" 1", "The parameter cannot be converted to a numeric value:  1"},
		{"1 ", "The parameter cannot be converted to a numeric value: 1 "},
		{"", "The parameter cannot be converted to a numeric value"},
		{"1e", "The parameter cannot be converted to a numeric value: 1e"},
		{".", "The parameter cannot be converted to a numeric value: ."},
		{"1e126", msgOverflow}, {"-1e126", msgOverflow}, {"11e125", msgOverflow},
		{"1e-131", msgUnderflow}, {"-1e-131", msgUnderflow}, {"0.9e-130", msgUnderflow},
		{"123456789012345678901234567890123456789", msgPrecision},
		{"-1.23456789012345678901234567890123456789", msgPrecision},
		{"1e100000000000000000000", msgOverflow},
	}
	for _, c := range bad {
		_, err := NormalizeNumber(c.in)
		wantValidation(t, err, c.msg)
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestConformance_ExprArithmetic(t *testing.T) {
	cases := []struct {
		a, b, sum, diff string
	}{
		{"1", "10000000000000000000000", "10000000000000000000001", "-9999999999999999999999"},
		{"0.1", "0.2", "0.3", "-0.1"},
		{"-5", "5", "0", "-10"},
		{"1.5", "1.5", "3", "0"},
		{"1e125", "-1e125", "0", "2" + zeros(125)},
		{"12345678901234567890123456789012345678", "0", "12345678901234567890123456789012345678", "12345678901234567890123456789012345678"},
	}
	for _, c := range cases {
		if got, err := AddNumbers(c.a, c.b); err != nil || got != c.sum {
			t.Errorf("AddNumbers(%s, %s) = %s, %v; want %s", c.a, c.b, got, err, c.sum)
		}
		if got, err := SubNumbers(c.a, c.b); err != nil || got != c.diff {
			t.Errorf("SubNumbers(%s, %s) = %s, %v; want %s", c.a, c.b, got, err, c.diff)
		}
	}
	_, err := AddNumbers("9e125", "9e125")
	wantValidation(t, err, msgOverflow)
	_, err = SubNumbers("9e125", "-9e125")
	wantValidation(t, err, msgOverflow)
	// DynamoDB answers an inexact result with the overflow message too.
	_, err = AddNumbers("1e50", "1")
	wantValidation(t, err, msgOverflow)
	_, err = AddNumbers("x", "1")
	wantValidation(t, err, "The parameter cannot be converted to a numeric value: x")
}

func TestConformance_ExprCompare(t *testing.T) {
	cases := []struct {
		a, b abi.Value
		c    int
		ok   bool
	}{
		{abi.N("1"), abi.N("1.0"), 0, true},
		{abi.N("-1"), abi.N("0.5"), -1, true},
		{abi.N("10"), abi.N("9"), 1, true},
		{abi.N("-10"), abi.N("-9"), -1, true},
		{abi.N("1e10"), abi.N("99999"), 1, true},
		{abi.N("0.001"), abi.N("0.01"), -1, true},
		{abi.S("a"), abi.S("b"), -1, true},
		{abi.S("Z"), abi.S("a"), -1, true},
		{abi.S("é"), abi.S("z"), 1, true},
		{abi.B([]byte{0xff}), abi.B([]byte{0x01, 0x02}), 1, true},
		{abi.N("1"), abi.S("1"), 0, false},
		{abi.Bool(true), abi.Bool(true), 0, false},
		{abi.L(), abi.L(), 0, false},
	}
	for _, c := range cases {
		got, ok := Compare(c.a, c.b)
		if ok != c.ok || (ok && got != c.c) {
			t.Errorf("Compare(%v, %v) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.c, c.ok)
		}
	}
}
