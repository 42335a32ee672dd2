package guest

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestW2_FastNumbersAreExact(t *testing.T) {
	for _, s := range []string{"0", "-0", "12.5", "-3.25", "1e3", "1.5E-7", "0.1", "0.000123", "123456789012345",
		"1234567890123456789", "9007199254740993", "1e22", "1e23", "4.9e-324", "1.7976931348623157e308", "1e400",
		"00012", ".5", "5.", "+7", "30.25", "-0.000000000000000000000000000000000001"} {
		want, werr := strconv.ParseFloat(s, 64)
		got, gerr := parseFloat(s)
		if (werr == nil) != (gerr == nil) || (werr == nil && math.Float64bits(got) != math.Float64bits(want)) {
			t.Errorf("%q: got %v %v, want %v %v", s, got, gerr, want, werr)
		}
	}
	for _, bad := range []string{"", "-", "e5", "1e", "x", "1.2.3", "--1"} {
		if _, err := parseFloat(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	for s, want := range map[string]int64{"0": 0, "-12": -12, "1e3": 1000, "2.0": 2, "9223372036854775807": math.MaxInt64} {
		if got, ok := parseInt(s, 64); !ok || got != want {
			t.Errorf("%q: %d %v", s, got, ok)
		}
	}
	for _, bad := range []string{"-", "", "1.5", "x", "128"} {
		if _, ok := parseInt(bad, 8); ok {
			t.Errorf("%q parsed as int8", bad)
		}
	}
}

func TestW2_FastFloatFormatMatchesStrconv(t *testing.T) {
	vals := []float64{0, 1, -1, 0.1, 0.3, 0.30000000000000004, 12.5, 37.5, 1e-4, 0.00012345, 999999.999, 1e6, 123456.789,
		0.09999999999999999, 2.675, 1.005, 100, 30.25, -4, 5e-5, 1.7976931348623157e308, math.SmallestNonzeroFloat64, math.Copysign(0, -1), 123456, -999999}
	x := uint64(88172645463325252)
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		var f float64
		switch i % 3 {
		case 0:
			f = math.Float64frombits(x)
		case 1:
			f = float64(int64(x%2000000)-1000000) / pow10[x%8]
		default:
			f = float64(x%100000000) / 1e4 * (1 - 2*float64(x>>63))
		}
		vals = append(vals, f)
	}
	for _, f := range vals {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		want := strconv.FormatFloat(f, 'g', -1, 64)
		if got := string(appendFloat(nil, f)); got != want {
			t.Fatalf("%v (%x): got %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
}

func TestW2_FastIntFormat(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 9, 10, 99, 100, -12345, math.MaxInt64, math.MinInt64 + 1, 1 << 53} {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %s", v, got)
		}
		got := appendIntN(nil, v)
		if want := strconv.FormatInt(v, 10); got[0] != 2 || int(got[1]) != len(want) || string(got[2:]) != want {
			t.Fatalf("%d: %q", v, got)
		}
	}
	if got := string(appendIntN(nil, math.MinInt64)[2:]); got != "-9223372036854775808" {
		t.Fatalf("min int: %s", got)
	}
}

// TestW2_FastFloatAgreesWithStrconv compares the fast parser with strconv on
// random decimal texts of the shapes DynamoDB numbers take.
func TestW2_FastFloatAgreesWithStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789"
	for i := 0; i < 200000; i++ {
		var b []byte
		if rng.IntN(4) == 0 {
			b = append(b, "-+"[rng.IntN(2)])
		}
		for n := rng.IntN(22); n > 0; n-- {
			b = append(b, alphabet[rng.IntN(10)])
		}
		if rng.IntN(2) == 0 {
			b = append(b, '.')
			for n := rng.IntN(22); n > 0; n-- {
				b = append(b, alphabet[rng.IntN(10)])
			}
		}
		if rng.IntN(4) == 0 {
			b = append(b, "eE"[rng.IntN(2)])
			b = strconv.AppendInt(b, int64(rng.IntN(60)-30), 10)
		}
		s := string(b)
		want, werr := strconv.ParseFloat(s, 64)
		if got, ok := fastFloat(s); ok && (werr != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("fastFloat(%q) = %v, strconv %v %v", s, got, want, werr)
		}
		if got, gerr := parseFloat(s); (werr == nil) != (gerr == nil) || (werr == nil && math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("parseFloat(%q) = %v %v, strconv %v %v", s, got, gerr, want, werr)
		}
	}
}
