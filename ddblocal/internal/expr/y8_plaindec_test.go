package expr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestY8_PlainDecimalsCompareNormaliseAndSizeAsDecimals: the fast path of
// plain numbers with a fraction agrees with the decimal arithmetic it
// skips, for numbers in normal form and not.
func TestY8_PlainDecimalsCompareNormaliseAndSizeAsDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	nums := []string{"0", "-0", "0.0", "-0.0", "0.00", "12.5", "12.50", "-12.50", "3.0", "-3.000", "0.05", "-0.05", "0.050", "00.5", ".5", "5.", "-.5",
		"+1.5", "1.5e3", "1.50E-2", "10.5", "100", "1000.0001", "-0", "0.1", "0.10", "9.9", "99.99", "-99.990",
		"1." + strings.Repeat("0", 37), "1." + strings.Repeat("0", 36) + "1", "1." + strings.Repeat("0", 37) + "1", "0." + strings.Repeat("0", 36) + "1",
		strings.Repeat("9", 20) + "." + strings.Repeat("9", 18), strings.Repeat("9", 20) + "." + strings.Repeat("9", 19)}
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	for range 400 {
		sign := []string{"", "-"}[r.IntN(2)]
		nums = append(nums, sign+digits(1+r.IntN(4))+"."+digits(1+r.IntN(4)), sign+fmt.Sprint(r.IntN(1000))+"."+digits(1+r.IntN(3))+strings.Repeat("0", r.IntN(3)),
			sign+"0.0"+digits(1+r.IntN(3)), fmt.Sprint(r.IntN(100)))
	}
	for _, a := range nums {
		d, err := parseChecked(a)
		if n, ok := normalPlain(a); ok {
			if err != nil || d.String() != n {
				t.Errorf("normalPlain(%q) = %q, the decimal's normal form %q (%v)", a, n, d.String(), err)
			}
		}
		if got, err2 := NormalizeNumber(a); (err == nil) != (err2 == nil) || (err == nil && got != d.String()) {
			t.Errorf("NormalizeNumber(%q) = %q, %v; the decimal's %q, %v", a, got, err2, d.String(), err)
		}
		if ip, fp, ok := plainNum(a); ok {
			if err != nil || d.String() != a {
				t.Errorf("plainNum(%q) (%q, %q) but its normal form is %q (%v)", a, ip, fp, d.String(), err)
			}
			if numberSize(a) != slowNumberSize(a) {
				t.Errorf("numberSize(%q) = %d, the decimal's %d", a, numberSize(a), slowNumberSize(a))
			}
		}
		for _, b := range nums[:60] {
			x, ok1 := parseDecimal(a)
			y, ok2 := parseDecimal(b)
			got, ok := compareNumbers(a, b)
			if ok != (ok1 && ok2) || (ok && got != cmpDecimal(x, y)) {
				t.Errorf("compareNumbers(%q, %q) = %d, %v; the decimals' %d, %v", a, b, got, ok, cmpDecimal(x, y), ok1 && ok2)
			}
		}
	}
}
