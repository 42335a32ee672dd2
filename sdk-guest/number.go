package guest

import (
	"math"
	"strconv"
)

// Fast paths for the decimal texts of DynamoDB numbers. strconv is exact but
// costly inside a Wasm guest; most numbers are short, and these parse them
// exactly (the classic exact fast path: an integer mantissa of at most 15
// digits scaled by an exactly representable power of ten), falling back to
// strconv for everything else.

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses s exactly, like strconv.ParseFloat(s, 64).
func parseFloat(s string) (float64, error) {
	if f, ok := fastFloat(s); ok {
		return f, nil
	}
	return strconv.ParseFloat(s, 64)
}

// fastFloat parses the common short forms: an optional sign, at most 19
// digits with an optional fraction, an optional exponent, whose mantissa
// fits 53 bits and whose scale is an exact power of ten (one correctly
// rounded multiplication or division). ok false: use strconv.
func fastFloat(s string) (float64, bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	var mant uint64
	start := i
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		mant = mant*10 + uint64(d)
	}
	digits, exp := i-start, 0
	if i < len(s) && s[i] == '.' {
		i++
		frac := i
		for ; i < len(s); i++ {
			d := s[i] - '0'
			if d > 9 {
				break
			}
			mant = mant*10 + uint64(d)
		}
		exp = frac - i
		digits += i - frac
	}
	if digits == 0 || digits > 19 {
		return 0, false
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return 0, false
		}
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return 0, false
		}
		exp += e
	}
	if mant > 1<<53 {
		return 0, false
	}
	f := float64(mant)
	switch {
	case mant == 0:
		f = 0
	case exp == 0:
	case exp > 0 && exp <= 22:
		f *= pow10[exp]
	case exp < 0 && exp >= -22:
		f /= pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// parseInt parses a decimal integer of bits bits; numbers in other forms
// ("1e3", "2.0") are accepted when they are integers in range.
func parseInt(s string, bits int) (int64, bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		neg, i = true, 1
	}
	if i < len(s) && len(s)-i <= 18 {
		var v int64
		for ; i < len(s); i++ {
			ch := s[i]
			if ch < '0' || ch > '9' {
				break
			}
			v = v*10 + int64(ch-'0')
		}
		if i == len(s) && (len(s) > 1 || !neg) {
			if neg {
				v = -v
			}
			if bits == 64 || (v >= -(1<<(bits-1)) && v < 1<<(bits-1)) {
				return v, true
			}
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return v, true
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil || f != math.Trunc(f) || f < -math.Ldexp(1, bits-1) || f >= math.Ldexp(1, bits-1) {
		return 0, false
	}
	return int64(f), true
}
