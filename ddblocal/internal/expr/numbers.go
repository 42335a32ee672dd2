package expr

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// DynamoDB's number limits: 38 significant digits, and a magnitude between
// 1E-130 and 9.99...E+125 (an adjusted exponent from -130 to 125).
const (
	maxDigits = 38
	maxAdjExp = 125
	minAdjExp = -130
)

// The messages DynamoDB answers for numbers it cannot store.
const (
	msgOverflow  = "Number overflow. Attempting to store a number with magnitude larger than supported range"
	msgUnderflow = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
	msgPrecision = "Attempting to store more than 38 significant digits in a Number"
	msgNotNumber = "The parameter cannot be converted to a numeric value"
)

// decimal is an exact decimal number: (-1)^neg * coef * 10^exp. coef has no
// trailing zeros unless it is zero, in which case exp is 0 and neg false.
type decimal struct {
	neg  bool
	coef *big.Int
	exp  int
}

// parseDecimal parses DynamoDB number text ([+-]digits[.digits][e[+-]digits]).
// It does not check DynamoDB's limits; ok is false for text that is no number.
func parseDecimal(s string) (d decimal, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	var digits strings.Builder
	intDigits, fracDigits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		digits.WriteByte(s[i])
		i++
		intDigits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			digits.WriteByte(s[i])
			i++
			fracDigits++
		}
	}
	if intDigits+fracDigits == 0 {
		return d, false
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		start := i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) {
			return d, false
		}
		for j := i; j < len(s); j++ {
			if s[j] < '0' || s[j] > '9' {
				return d, false
			}
		}
		e, err := strconv.Atoi(s[start:])
		if err != nil {
			// An exponent beyond int: clamp; the limits check reports it
			// (or the number is zero and the exponent does not matter).
			if s[start] == '-' {
				e = -1 << 40
			} else {
				e = 1 << 40
			}
		}
		exp = e
		i = len(s)
	}
	if i != len(s) {
		return d, false
	}
	ds := strings.TrimLeft(digits.String(), "0")
	if ds == "" {
		return decimal{coef: new(big.Int)}, true
	}
	exp -= fracDigits
	trimmed := strings.TrimRight(ds, "0")
	exp += len(ds) - len(trimmed)
	d.coef, _ = new(big.Int).SetString(trimmed, 10)
	d.exp = exp
	return d, true
}

// normalize strips trailing zeros from the coefficient.
func (d decimal) normalize() decimal {
	if d.coef.Sign() == 0 {
		return decimal{coef: new(big.Int)}
	}
	ten := big.NewInt(10)
	q, r := new(big.Int), new(big.Int)
	c := new(big.Int).Set(d.coef)
	for {
		q.QuoRem(c, ten, r)
		if r.Sign() != 0 {
			break
		}
		c.Set(q)
		d.exp++
	}
	d.coef = c
	return d
}

// digits returns the number of significant digits (0 for zero).
func (d decimal) digits() int {
	if d.coef.Sign() == 0 {
		return 0
	}
	return len(d.coef.String())
}

// check returns DynamoDB's error for a number outside its limits.
func (d decimal) check() error {
	if d.coef.Sign() == 0 {
		return nil
	}
	n := d.digits()
	adj := d.exp + n - 1
	if adj > maxAdjExp {
		return apierr.Validation("%s", msgOverflow)
	}
	if adj < minAdjExp {
		return apierr.Validation("%s", msgUnderflow)
	}
	if n > maxDigits {
		return apierr.Validation("%s", msgPrecision)
	}
	return nil
}

// String returns the plain decimal text (no exponent) of d.
func (d decimal) String() string {
	if d.coef.Sign() == 0 {
		return "0"
	}
	ds := d.coef.String()
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	switch {
	case d.exp >= 0:
		b.WriteString(ds)
		b.WriteString(strings.Repeat("0", d.exp))
	case -d.exp < len(ds):
		p := len(ds) + d.exp
		b.WriteString(ds[:p])
		b.WriteByte('.')
		b.WriteString(ds[p:])
	default:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -d.exp-len(ds)))
		b.WriteString(ds)
	}
	return b.String()
}

// signed returns the coefficient with d's sign.
func (d decimal) signed() *big.Int {
	c := new(big.Int).Set(d.coef)
	if d.neg {
		c.Neg(c)
	}
	return c
}

// align returns the signed coefficients of a and b scaled to a common exponent.
func align(a, b decimal) (x, y *big.Int, exp int) {
	x, y = a.signed(), b.signed()
	exp = min(a.exp, b.exp)
	if a.exp > exp {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(a.exp-exp)), nil))
	}
	if b.exp > exp {
		y.Mul(y, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.exp-exp)), nil))
	}
	return x, y, exp
}

// cmpDecimal compares two decimals numerically.
func cmpDecimal(a, b decimal) int {
	as, bs := a.coef.Sign(), b.coef.Sign()
	if a.neg {
		as = -as
	}
	if b.neg {
		bs = -bs
	}
	if as != bs || as == 0 {
		return compareInts(as, bs)
	}
	// Same sign, both non-zero: compare adjusted exponents first (cheap).
	aa, ba := a.exp+a.digits(), b.exp+b.digits()
	if aa != ba {
		if as > 0 {
			return compareInts(aa, ba)
		}
		return compareInts(ba, aa)
	}
	x, y, _ := align(a, b)
	return x.Cmp(y)
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fromSigned(c *big.Int, exp int) decimal {
	d := decimal{coef: new(big.Int).Abs(c), exp: exp, neg: c.Sign() < 0}
	return d.normalize()
}

// parseChecked parses and limit-checks a number, with DynamoDB's messages.
func parseChecked(s string) (decimal, error) {
	if s == "" {
		return decimal{}, apierr.Validation("%s", msgNotNumber)
	}
	d, ok := parseDecimal(s)
	if !ok {
		return decimal{}, apierr.Validation("%s: %s", msgNotNumber, s)
	}
	if err := d.check(); err != nil {
		return decimal{}, err
	}
	return d, nil
}

// NormalizeNumber validates DynamoDB number text (at most 38 significant
// digits, magnitude within 1E-130 .. 9.9999999999999999999999999999999999999E+125,
// no NaN/Inf, no spaces) and returns it the way DynamoDB returns it: plain
// decimal notation without exponent, leading zeros, trailing fractional zeros
// or a '+' sign, and "0" for any zero.
func NormalizeNumber(s string) (string, error) {
	if n, ok := normalPlain(s); ok {
		return n, nil // a plain number is its own normal form (plaindec.go)
	}
	d, err := parseChecked(s)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// AddNumbers computes a+b exactly, with DynamoDB's overflow / precision
// errors. A result that needs more than 38 significant digits is answered
// with the overflow message, as DynamoDB does for arithmetic.
func AddNumbers(a, b string) (string, error) { return arith(a, b, false) }

// SubNumbers computes a-b exactly, with DynamoDB's overflow / precision errors.
func SubNumbers(a, b string) (string, error) { return arith(a, b, true) }

func arith(a, b string, sub bool) (string, error) {
	x, err := parseChecked(a)
	if err != nil {
		return "", err
	}
	y, err := parseChecked(b)
	if err != nil {
		return "", err
	}
	xi, yi, exp := align(x, y)
	if sub {
		xi.Sub(xi, yi)
	} else {
		xi.Add(xi, yi)
	}
	r := fromSigned(xi, exp)
	if r.coef.Sign() != 0 {
		n := r.digits()
		adj := r.exp + n - 1
		if adj > maxAdjExp || n > maxDigits {
			return "", apierr.Validation("%s", msgOverflow)
		}
		if adj < minAdjExp {
			return "", apierr.Validation("%s", msgUnderflow)
		}
	}
	return r.String(), nil
}

// compareNumbers compares two number texts; ok is false if either is invalid.
func compareNumbers(a, b string) (int, bool) {
	if ai, af, ok := plainNum(a); ok {
		if bi, bf, ok := plainNum(b); ok {
			return cmpPlain(a, b, ai, af, bi, bf), true
		}
	}
	x, ok1 := parseDecimal(a)
	y, ok2 := parseDecimal(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return cmpDecimal(x, y), true
}

// numberKey returns a canonical text of a number (for set membership), or
// the text itself when it does not parse.
func numberKey(s string) string {
	d, ok := parseDecimal(s)
	if !ok {
		return s
	}
	if d.coef.Sign() == 0 {
		return "0"
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	return sign + d.coef.String() + "e" + strconv.Itoa(d.exp)
}

// plainInt reports whether s is an integer of at most 38 digits in its
// shortest form ("0", "-12"; never "-0", "007", "+1", "1.0" or "1e3"),
// and returns its digits. Such a number is its own normal form, and two
// of them compare without parsing.
func plainInt(s string) (digits string, ok bool) {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if d == "" || len(d) > 38 || (d[0] == '0' && len(s) > 1) {
		return "", false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return "", false
		}
	}
	return d, true
}
