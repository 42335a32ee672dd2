package guest_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestW2_DecimalSumsExactly sums the prices that float64 gets wrong
// (5.550000000000001, 21.700000000000003) and gets the exact decimals.
func TestW2_DecimalSumsExactly(t *testing.T) {
	for _, c := range []struct {
		prices []string
		want   string
	}{
		{[]string{"0.1", "2.25", "1.5", "1.7"}, "5.55"},
		{[]string{"1.5", "2.25", "0.1", "17.85"}, "21.7"},
		{[]string{"0.1", "0.2"}, "0.3"},
		{[]string{"19.99", "-19.99"}, "0"},
		{[]string{"1E+125", "-1E-130"}, ""}, // checked against the reference only
	} {
		var sum guest.Decimal
		var float float64
		for _, p := range c.prices {
			d := guest.MustDecimal(p)
			sum = sum.Add(d)
			float += d.Float64()
		}
		if c.want != "" && sum.String() != c.want {
			t.Errorf("sum of %v = %s, want %s (float64 says %v)", c.prices, sum, c.want, float)
		}
		// The reference: math/big's exact rationals.
		ref := new(big.Rat)
		for _, p := range c.prices {
			r, _ := new(big.Rat).SetString(p)
			ref.Add(ref, r)
		}
		got, _ := new(big.Rat).SetString(sum.String())
		if got.Cmp(ref) != 0 {
			t.Errorf("sum of %v = %s, exact is %s", c.prices, sum, ref.FloatString(140))
		}
	}
	// That last sum is exact but too long to store.
	big := guest.MustDecimal("1E+125").Sub(guest.MustDecimal("1E-130"))
	if !errors.Is(big.Valid(), guest.ErrDecimalDigits) {
		t.Errorf("Valid of a 256-digit sum: %v", big.Valid())
	}
}

func TestW2_DecimalParseFormat(t *testing.T) {
	for in, want := range map[string]string{
		"12.50": "12.5", "-0": "0", "+7": "7", "0.000": "0", "1.5E+3": "1500", "1e-3": "0.001",
		"-00012.3400e2": "-1234", "9.9999999999999999999999999999999999999E+125": "99999999999999999999999999999999999999" + strings.Repeat("0", 88),
		"1E-130": "0." + strings.Repeat("0", 129) + "1", ".5": "0.5", "5.": "5", "0e999999999999": "0",
	} {
		d, err := guest.ParseDecimal(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDecimal(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for in, want := range map[string]error{
		"": guest.ErrDecimalSyntax, "-": guest.ErrDecimalSyntax, "1..2": guest.ErrDecimalSyntax, "1e": guest.ErrDecimalSyntax,
		"x": guest.ErrDecimalSyntax, "1 ": guest.ErrDecimalSyntax, "NaN": guest.ErrDecimalSyntax, ".": guest.ErrDecimalSyntax,
		"1E+126": guest.ErrDecimalRange, "1E-131": guest.ErrDecimalRange, "1e99999999999": guest.ErrDecimalRange,
		"1" + strings.Repeat("2", 38): guest.ErrDecimalDigits,
	} {
		if _, err := guest.ParseDecimal(in); !errors.Is(err, want) {
			t.Errorf("ParseDecimal(%q): %v, want %v", in, err, want)
		}
	}
	// 38 digits with trailing zeros beyond them are fine.
	if _, err := guest.ParseDecimal("1" + strings.Repeat("2", 37) + "000000"); err != nil {
		t.Error(err)
	}
}

func TestW2_DecimalArithmeticAndCompare(t *testing.T) {
	d := guest.MustDecimal
	cases := []struct{ got, want string }{
		{d("1.1").Mul(d("-1.1")).String(), "-1.21"},
		{d("0.05").Mul(d("40")).String(), "2"},
		{d("10").Sub(d("0.01")).String(), "9.99"},
		{d("0.01").Sub(d("10")).String(), "-9.99"},
		{d("-3").Add(d("1")).String(), "-2"},
		{d("-3").Neg().Abs().String(), "3"},
		{guest.DecimalFromInt(-42).String(), "-42"},
		{d("123.456").Mul(guest.Decimal{}).String(), "0"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %s, want %s", i, c.got, c.want)
		}
	}
	ordered := []string{"-1E+10", "-2.5", "-2.4999", "0", "1E-130", "0.1", "0.11", "2", "10", "1E+125"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := d(ordered[i]).Cmp(d(ordered[j])); got != want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if !d("1.50").Equal(d("1.5")) || d("1.5") != d("15E-1") {
		t.Error("equal numbers in different texts differ")
	}
}

func TestW2_DecimalRoundModes(t *testing.T) {
	for _, c := range []struct {
		in     string
		places int
		mode   guest.RoundingMode
		want   string
	}{
		{"2.345", 2, guest.HalfEven, "2.34"}, {"2.355", 2, guest.HalfEven, "2.36"}, {"2.3451", 2, guest.HalfEven, "2.35"},
		{"2.345", 2, guest.HalfUp, "2.35"}, {"-2.345", 2, guest.HalfUp, "-2.35"}, {"2.344", 2, guest.HalfUp, "2.34"},
		{"2.349", 2, guest.Down, "2.34"}, {"-2.349", 2, guest.Down, "-2.34"},
		{"0.5", 0, guest.HalfEven, "0"}, {"1.5", 0, guest.HalfEven, "2"}, {"0.5", 0, guest.HalfUp, "1"},
		{"0.004", 2, guest.HalfUp, "0"}, {"0.0051", 2, guest.HalfEven, "0.01"}, {"9.995", 2, guest.HalfUp, "10"},
		{"1250", -2, guest.HalfEven, "1200"}, {"1350", -2, guest.HalfEven, "1400"}, {"7.1", 3, guest.HalfUp, "7.1"},
		{"0.00001", 2, guest.HalfEven, "0"}, {"-0.00001", 2, guest.Down, "0"},
	} {
		if got := guest.MustDecimal(c.in).Round(c.places, c.mode); got.String() != c.want {
			t.Errorf("Round(%s, %d, %d) = %s, want %s", c.in, c.places, c.mode, got, c.want)
		}
	}
}

type priced struct {
	Total guest.Decimal  `ddb:"total"`
	Tax   *guest.Decimal `ddb:"tax"`
}

func TestW2_DecimalMapsToNumberExactly(t *testing.T) {
	in := abi.Item{"total": abi.N("12345678901234567890.123456789012345678"), "tax": abi.N("1.50")}
	var p priced
	if err := guest.FromItem(in, &p); err != nil {
		t.Fatal(err)
	}
	out, err := guest.ToItem(p)
	if err != nil {
		t.Fatal(err)
	}
	if out["total"].Str != "12345678901234567890.123456789012345678" || out["tax"].Str != "1.5" || out["tax"].Kind != abi.KindN {
		t.Fatalf("round trip: %v", out)
	}
	if err := guest.FromItem(abi.Item{"total": abi.S("1")}, &p); err == nil {
		t.Error("an S read into a Decimal")
	}
	p.Total = guest.MustDecimal("1E+125").Mul(guest.MustDecimal("10"))
	if _, err := guest.ToItem(p); err == nil || !strings.Contains(err.Error(), "outside the range") {
		t.Errorf("a Decimal DynamoDB cannot store mapped: %v", err)
	}
}

// FuzzDecimalRoundTrip: whatever parses formats to a text that parses to the
// same Decimal, the same rational number as the input, and formats the same.
func FuzzDecimalRoundTrip(f *testing.F) {
	for _, s := range []string{"0", "12.50", "-1.5E+3", "1E-130", "9.9999999999999999999999999999999999999E+125", ".5", "007.700"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := guest.ParseDecimal(s)
		if err != nil {
			return
		}
		text := d.String()
		back, err := guest.ParseDecimal(text)
		if err != nil || back != d || back.String() != text {
			t.Fatalf("%q → %q → %v, %v", s, text, back, err)
		}
		want, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		got, _ := new(big.Rat).SetString(text)
		if ok && got.Cmp(want) != 0 {
			t.Fatalf("%q formats as %q, another number", s, text)
		}
		if sum := d.Add(d).Sub(d); sum != d {
			t.Fatalf("%s + %s - %s = %s", d, d, d, sum)
		}
	})
}

// BenchmarkDecimalSum sums a price into a total, as order-summary's Evolve
// does per ItemAdded: parse the N text, add, check it fits, format it.
func BenchmarkDecimalSum(b *testing.B) {
	b.ReportAllocs()
	total := guest.MustDecimal("1234.5")
	for i := 0; i < b.N; i++ {
		p, _ := guest.ParseDecimal("12.25")
		sum := total.Add(p)
		if sum.Valid() != nil || len(sum.String()) == 0 {
			b.Fatal(sum)
		}
	}
}

// FuzzDecimalArithmetic checks Add, Sub, Mul and Cmp (their uint64 fast
// paths and their digit-string paths) against math/big's exact rationals.
func FuzzDecimalArithmetic(f *testing.F) {
	for _, p := range [][2]string{{"0.1", "2.25"}, {"18446744073709551615", "1"}, {"9999999999999999999", "1E-5"},
		{"-1.5", "1.5"}, {"1E+100", "1E-30"}, {"123456789012345678901234567890", "-0.000001"}, {"4294967296", "4294967296"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, as, bs string) {
		a, err1 := guest.ParseDecimal(as)
		b, err2 := guest.ParseDecimal(bs)
		if err1 != nil || err2 != nil {
			return
		}
		ra, _ := new(big.Rat).SetString(a.String())
		rb, _ := new(big.Rat).SetString(b.String())
		check := func(op string, got guest.Decimal, want *big.Rat) {
			r, ok := new(big.Rat).SetString(got.String())
			if !ok || r.Cmp(want) != 0 {
				t.Fatalf("%s %s %s = %s, want %s", a, op, b, got, want.FloatString(40))
			}
			if back, err := guest.ParseDecimal(got.String()); err == nil && back != got {
				t.Fatalf("%s %s %s = %s is not in normal form (%#v vs %#v)", a, op, b, got, got, back)
			}
		}
		check("+", a.Add(b), new(big.Rat).Add(ra, rb))
		check("-", a.Sub(b), new(big.Rat).Sub(ra, rb))
		check("*", a.Mul(b), new(big.Rat).Mul(ra, rb))
		if got, want := a.Cmp(b), ra.Cmp(rb); got != want {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", a, b, got, want)
		}
	})
}
