package guest

// The arithmetic of Decimal: exact. Coefficients of at most 19 digits are
// added, compared and multiplied as uint64 when the result fits; anything
// else on digit strings, in the same steps as the AssemblyScript example's
// decimal.ts, so both give the same digits.

import (
	"math/bits"
)

var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// maxScalable[d] is the largest coefficient that can be scaled by 10^d in
// a uint64 (compared, not divided: division and 128-bit products are slow
// in a Wasm guest).
var maxScalable = func() (m [len(pow10u)]uint64) {
	for d, p := range pow10u {
		m[d] = ^uint64(0) / p
	}
	return m
}()

// alignSmall returns the coefficients of a and b (both small) scaled to
// their common exponent; ok false when a scaled one overflows uint64.
func alignSmall(a, b Decimal) (x, y uint64, exp int, ok bool) {
	x, y, exp = a.lo, b.lo, int(min(a.exp, b.exp))
	if d := int(a.exp) - exp; d > 0 {
		if d >= len(pow10u) || x > maxScalable[d] {
			return 0, 0, 0, false
		}
		x *= pow10u[d]
	}
	if d := int(b.exp) - exp; d > 0 {
		if d >= len(pow10u) || y > maxScalable[d] {
			return 0, 0, 0, false
		}
		y *= pow10u[d]
	}
	return x, y, exp, true
}

// RoundingMode says how Round treats the digits it drops.
type RoundingMode int

// The rounding modes.
const (
	// HalfEven rounds to the nearest, ties to the even digit (banker's
	// rounding): 2.345 → 2.34, 2.355 → 2.36.
	HalfEven RoundingMode = iota
	// HalfUp rounds to the nearest, ties away from zero (the school rule):
	// 2.345 → 2.35, -2.345 → -2.35.
	HalfUp
	// Down truncates toward zero: 2.349 → 2.34, -2.349 → -2.34.
	Down
)

// aligned returns the magnitudes of a and b as integer digit strings scaled
// to their common (smaller) exponent, and that exponent.
func aligned(a, b Decimal) (x, y []byte, exp int) {
	exp = int(min(a.exp, b.exp))
	if a.IsZero() {
		exp = int(b.exp)
	} else if b.IsZero() {
		exp = int(a.exp)
	}
	scale := func(d Decimal) []byte {
		c := d.coef()
		if c == "" {
			return []byte{'0'}
		}
		out := make([]byte, len(c), len(c)+int(d.exp)-exp)
		copy(out, c)
		for i := exp; i < int(d.exp); i++ {
			out = append(out, '0')
		}
		return out
	}
	return scale(a), scale(b), exp
}

// cmpDigits compares two integer digit strings without leading zeros
// ("0" is zero).
func cmpDigits(x, y []byte) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func cmpMag(a, b Decimal) int {
	if a.big == "" && b.big == "" {
		if x, y, _, ok := alignSmall(a, b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	x, y, _ := aligned(a, b)
	return cmpDigits(x, y)
}

// addDigits returns x + y.
func addDigits(x, y []byte) []byte {
	if len(x) < len(y) {
		x, y = y, x
	}
	out := make([]byte, len(x)+1)
	carry := byte(0)
	for i := 0; i < len(x); i++ {
		s := x[len(x)-1-i] - '0' + carry
		if i < len(y) {
			s += y[len(y)-1-i] - '0'
		}
		carry = s / 10
		out[len(out)-1-i] = '0' + s%10
	}
	out[0] = '0' + carry
	return out
}

// subDigits returns x - y for x >= y.
func subDigits(x, y []byte) []byte {
	out := make([]byte, len(x))
	borrow := 0
	for i := 0; i < len(x); i++ {
		s := int(x[len(x)-1-i]-'0') - borrow
		if i < len(y) {
			s -= int(y[len(y)-1-i] - '0')
		}
		borrow = 0
		if s < 0 {
			s += 10
			borrow = 1
		}
		out[len(out)-1-i] = byte('0' + s)
	}
	return out
}

// Add returns d + o, exactly.
//
// Coefficients of at most 19 digits are added as uint64 inline, without a
// call (calls are dear in a Wasm guest); a sum that does not fit, or a
// coefficient kept as digits, takes addSlow.
func (d Decimal) Add(o Decimal) Decimal {
	if d.big != "" || o.big != "" {
		return addSlow(d, o)
	}
	if o.lo == 0 {
		return d
	}
	if d.lo == 0 {
		return o
	}
	x, y, exp := d.lo, o.lo, int(d.exp)
	if k := int(d.exp) - int(o.exp); k > 0 {
		if k >= len(pow10u) || x > maxScalable[k] {
			return addSlow(d, o)
		}
		x *= pow10u[k]
		exp = int(o.exp)
	} else if k < 0 {
		if -k >= len(pow10u) || y > maxScalable[-k] {
			return addSlow(d, o)
		}
		y *= pow10u[-k]
	}
	neg := d.neg
	switch {
	case d.neg == o.neg:
		sum := x + y
		if sum < x { // a carry out of 64 bits
			return addSlow(d, o)
		}
		x = sum
	case x > y:
		x -= y
	case x < y:
		x, neg = y-x, o.neg
	default:
		return Decimal{}
	}
	if x >= 1e19 { // 20 digits, scaled or summed: small keeps them as text
		return small(neg, x, exp)
	}
	x, exp = trimZeros(x, exp)
	return Decimal{lo: x, exp: exp32(exp), neg: neg}
}

// addSlow returns d + o on digit strings: any coefficients, any sum.
func addSlow(d, o Decimal) Decimal {
	if d.IsZero() {
		return o
	}
	if o.IsZero() {
		return d
	}
	x, y, exp := aligned(d, o)
	if d.neg == o.neg {
		return normal(d.neg, addDigits(x, y), exp)
	}
	switch cmpDigits(x, y) {
	case 0:
		return Decimal{}
	case 1:
		return normal(d.neg, subDigits(x, y), exp)
	}
	return normal(o.neg, subDigits(y, x), exp)
}

// Sub returns d - o, exactly.
func (d Decimal) Sub(o Decimal) Decimal { return d.Add(o.Neg()) }

// Mul returns d × o, exactly.
func (d Decimal) Mul(o Decimal) Decimal {
	if d.IsZero() || o.IsZero() {
		return Decimal{}
	}
	if d.big == "" && o.big == "" {
		if hi, lo := bits.Mul64(d.lo, o.lo); hi == 0 {
			return small(d.neg != o.neg, lo, int(d.exp)+int(o.exp))
		}
	}
	dc, oc := d.coef(), o.coef()
	acc := make([]int, len(dc)+len(oc))
	for i := len(dc) - 1; i >= 0; i-- {
		for j := len(oc) - 1; j >= 0; j-- {
			acc[i+j+1] += int(dc[i]-'0') * int(oc[j]-'0')
		}
	}
	for k := len(acc) - 1; k > 0; k-- {
		acc[k-1] += acc[k] / 10
		acc[k] %= 10
	}
	out := make([]byte, len(acc))
	for k, v := range acc {
		out[k] = byte('0' + v)
	}
	return normal(d.neg != o.neg, out, int(d.exp)+int(o.exp))
}

// Round returns d rounded to places digits after the decimal point (a
// negative places rounds to tens, hundreds …) by mode.
func (d Decimal) Round(places int, mode RoundingMode) Decimal {
	target := -places
	if d.IsZero() || int(d.exp) >= target {
		return d
	}
	c := d.coef()
	drop := target - int(d.exp) // digits dropped from the right, >= 1
	kept := []byte{'0'}
	if drop < len(c) {
		kept = []byte(c[:len(c)-drop])
	}
	// first is the first dropped digit; the coefficient has no trailing
	// zeros, so the dropped digits after it are zero only when it is the
	// coefficient's last digit.
	first, restZero := byte('0'), false
	if drop <= len(c) {
		first = c[len(c)-drop]
		restZero = drop == 1
	}
	up := false
	switch mode {
	case HalfUp:
		up = first >= '5'
	case HalfEven:
		last := kept[len(kept)-1]
		up = first > '5' || (first == '5' && (!restZero || (last-'0')%2 == 1))
	}
	if up {
		kept = addDigits(kept, []byte{'1'})
	}
	return normal(d.neg, kept, target)
}
