package guest

import (
	"errors"
	"math/big"
	"strconv"
	"testing"
)

// checkExact fails unless got is the exact value want (a decimal text) in
// the normal form the general parser gives that value.
func checkExact(t *testing.T, what string, got Decimal, want string) {
	t.Helper()
	r, ok := new(big.Rat).SetString(got.String())
	w, _ := new(big.Rat).SetString(want)
	if !ok || r.Cmp(w) != 0 {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
	if norm, _ := parseGeneral(want); got != norm {
		t.Fatalf("%s = %#v, not in normal form %#v", what, got, norm)
	}
}

// TestW2_DecimalFastAddOverflowsIntoDigits adds and subtracts at the edges
// of Add's uint64 path: sums of 20 digits, carries out of 64 bits, scalings
// that do not fit, differences that stay at 20 digits. Each result is exact
// and in the one normal form (== works).
func TestW2_DecimalFastAddOverflowsIntoDigits(t *testing.T) {
	for _, c := range []struct{ a, b, sum string }{
		{"9999999999999999999", "1", "10000000000000000000"},
		{"18446744073709551615", "1", "18446744073709551616"},
		{"9999999999999999999", "9999999999999999999", "19999999999999999998"},
		{"10000000000000010000", "-1", "10000000000000009999"},
		{"10000000000000000000", "-1", "9999999999999999999"},
		{"1E+18", "1E-5", "1000000000000000000.00001"},
		{"1844674407370955161", "0.5", "1844674407370955161.5"},
		{"1844674407370955162", "0.5", "1844674407370955162.5"},
		{"0.0000000000000000001", "1", "1.0000000000000000001"},
		{"12.5", "12.5", "25"},
		{"0.75", "0.25", "1"},
		{"-0.75", "-0.25", "-1"},
		{"100", "-99.99", "0.01"},
		{"-100", "99.99", "-0.01"},
		{"1E+107", "1E+107", "2E+107"},
	} {
		a, b := MustDecimal(c.a), MustDecimal(c.b)
		checkExact(t, c.a+" + "+c.b, a.Add(b), c.sum)
		checkExact(t, c.b+" + "+c.a, b.Add(a), c.sum)
		checkExact(t, c.sum+" - "+c.b, MustDecimal(c.sum).Sub(b), c.a)
	}
}

// TestW2_DecimalNegativeZeroIsZero reads every spelling of zero, with or
// without a sign, point or exponent, as the one zero, and sums that cancel
// out give it too.
func TestW2_DecimalNegativeZeroIsZero(t *testing.T) {
	for _, s := range []string{"0", "-0", "+0", "-0.00", "0E+5", "-0E-999999", "-000.000e3", "-.0", "0."} {
		d, err := ParseDecimal(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if d != (Decimal{}) || d.String() != "0" || d.Sign() != 0 {
			t.Fatalf("%q = %#v (%s), want the zero Decimal", s, d, d)
		}
	}
	if d := MustDecimal("1.5").Add(MustDecimal("-1.5")); d != (Decimal{}) {
		t.Fatalf("1.5 + -1.5 = %#v", d)
	}
	if d := MustDecimal("-0").Add(MustDecimal("-2.5")); d != MustDecimal("-2.5") {
		t.Fatalf("-0 + -2.5 = %#v", d)
	}
	if d := MustDecimal("-2.5").Neg().Sub(MustDecimal("2.5")); d != (Decimal{}) {
		t.Fatalf("2.5 - 2.5 = %#v", d)
	}
}

// TestW2_DecimalExponentLimits checks the range DynamoDB stores at both
// ends, through the short parser and Valid's one-compare path (exponents
// -130 to 107) and its general check beyond.
func TestW2_DecimalExponentLimits(t *testing.T) {
	for _, c := range []struct {
		s    string
		want error
	}{
		{"1E-130", nil},
		{"1E-131", ErrDecimalRange},
		{"1.5E-130", ErrDecimalRange},
		{"9.999999999999999999E+125", nil},
		{"1E+125", nil},
		{"1E+126", ErrDecimalRange},
		{"1234567890123456789E+107", nil},
		{"1234567890123456789E+108", ErrDecimalRange},
		{"999999999999999999E+108", nil},
		{"1E-999999", ErrDecimalRange},
		{"1E+999999", ErrDecimalRange},
		{"1E+1000000", ErrDecimalRange},
		{"0E+1000000", nil},
		{"12345678901234567890123456789012345678", nil},
		{"123456789012345678901234567890123456789", ErrDecimalDigits},
	} {
		_, err := ParseDecimal(c.s)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Fatalf("ParseDecimal(%q) = %v, want %v", c.s, err, c.want)
		}
	}
	// A sum can leave the range: Valid says so.
	top := MustDecimal("9.999999999999999999E+125")
	if err := top.Add(top).Valid(); !errors.Is(err, ErrDecimalRange) {
		t.Fatalf("top + top: Valid = %v, want ErrDecimalRange", err)
	}
}

// TestW2_DecimalExponentOverflowPanics squares 1E+100 until its exponent
// passes what a Decimal keeps: Mul panics instead of wrapping around.
func TestW2_DecimalExponentOverflowPanics(t *testing.T) {
	d := MustDecimal("1E+100")
	defer func() {
		if r := recover(); r != errExponent {
			t.Fatalf("recovered %v, want errExponent", r)
		}
	}()
	for range 40 {
		d = d.Mul(d)
	}
	t.Fatalf("no panic: %#v", d)
}

// TestW2_DecimalTrimAndDigitsMatchDivision checks the multiply-based zero
// trimming and the bit-length digit count against division and strconv
// around every power of ten.
func TestW2_DecimalTrimAndDigitsMatchDivision(t *testing.T) {
	var vals []uint64
	for _, p := range pow10u {
		for _, m := range []uint64{1, 2, 3, 5, 7, 9, 10, 25, 99, 1844} {
			vals = append(vals, p*m, p*m-1, p*m+1)
		}
	}
	vals = append(vals, ^uint64(0), ^uint64(0)-5, 18446744073709551610)
	for _, v := range vals {
		if v == 0 {
			continue
		}
		want, wexp := v, 0
		for want%10 == 0 {
			want, wexp = want/10, wexp+1
		}
		if got, exp := trimZeros(v, 0); got != want || exp != wexp {
			t.Fatalf("trimZeros(%d) = %d, %d; want %d, %d", v, got, exp, want, wexp)
		}
		if v < 1e19 {
			if got, want := (Decimal{lo: v}).digits(), len(strconv.FormatUint(v, 10)); got != want {
				t.Fatalf("digits(%d) = %d, want %d", v, got, want)
			}
		}
	}
}
