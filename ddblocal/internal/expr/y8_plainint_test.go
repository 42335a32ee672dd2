package expr

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestY8_PlainIntegersCompareAndNormaliseAsDecimals: the integer fast
// path agrees with the decimal arithmetic it skips.
func TestY8_PlainIntegersCompareAndNormaliseAsDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	nums := []string{"0", "-0", "1", "-1", "9", "10", "-10", "007", "+5", "1.0", "1e3", "99999999999999999999999999999999999999", "-99999999999999999999999999999999999999", "100000000000000000000000000000000000000"}
	for range 300 {
		nums = append(nums, fmt.Sprint(r.Int64N(2000000)-1000000), fmt.Sprint(r.Int64()), fmt.Sprint(r.Int64N(100)*1000), "-"+fmt.Sprint(r.Int64N(9)+1)+"000000000000000000000000000000000000")
	}
	for _, a := range nums {
		if _, ok := plainInt(a); ok {
			if numberSize(a) != slowNumberSize(a) {
				t.Errorf("numberSize(%q) = %d, the decimal's %d", a, numberSize(a), slowNumberSize(a))
			}
			d, err := parseChecked(a)
			if err != nil || d.String() != a {
				t.Errorf("plainInt(%q) but its normal form is %v (%v)", a, d.String(), err)
			}
		}
		for _, b := range nums[:40] {
			x, _ := parseDecimal(a)
			y, _ := parseDecimal(b)
			want := cmpDecimal(x, y)
			if got, _ := compareNumbers(a, b); got != want {
				t.Errorf("compareNumbers(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
