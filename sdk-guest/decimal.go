package guest

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// Decimal is an exact decimal number, the arithmetic type of DynamoDB
// numbers (N): money, quantities, anything summed where float64 would drift
// (0.1 + 0.2 is 0.30000000000000004 in float64, 0.3 in Decimal).
//
// Arithmetic (Add, Sub, Mul, Neg) is exact and unbounded in digits (an
// exponent beyond ±2^31, reached only by products far outside anything
// DynamoDB stores, panics rather than wrapping around); Round brings a
// result to a number of decimal places with a stated RoundingMode. DynamoDB
// stores at most 38 significant digits with a magnitude between 1E-130 and
// 9.99…E+125: ParseDecimal refuses anything else, Valid reports whether a
// result fits, and a state or item field that does not fit fails to map
// with a MappingError instead of being rounded silently.
//
// A Decimal field of a state struct maps to an N attribute exactly, in both
// directions. The zero value is 0. Decimals are values: compare them with
// Cmp or Equal (== also works, every Decimal is kept in one normal form).
type Decimal struct {
	// The coefficient, without leading or trailing zeros: in lo when it
	// has at most 19 digits (0 is zero), else its digits in big. The value
	// is ±coefficient × 10^exp.
	//
	// The exponent is an int32 so that a Decimal is 32 bytes: Go's Wasm
	// port zeroes and copies values up to that size with plain stores, and
	// larger ones with a call out of the module.
	lo  uint64
	big string
	exp int32
	neg bool
}

// exp32 returns e as a Decimal's exponent; a product of numbers far outside
// anything DynamoDB stores can overflow it, and panics.
func exp32(e int) int32 {
	if e != int(int32(e)) {
		panic(errExponent)
	}
	return int32(e)
}

var errExponent = errors.New("decimal: exponent overflows int32 (a product of numbers far outside the range DynamoDB stores)")

// smallDigits is the most digits a coefficient kept in lo has.
const smallDigits = 19

// coef returns the coefficient's digits ("" for zero).
func (d Decimal) coef() string {
	if d.big != "" || d.lo == 0 {
		return d.big
	}
	var buf [20]byte
	return string(strconv.AppendUint(buf[:0], d.lo, 10))
}

// digits returns how many digits the coefficient has (0 for zero).
func (d Decimal) digits() int {
	if d.big != "" {
		return len(d.big)
	}
	if d.lo == 0 {
		return 0
	}
	// log10 from the bit length (1233/4096 ≈ log10 2), then one compare.
	n := bits.Len64(d.lo) * 1233 >> 12
	if d.lo >= pow10u[n] {
		n++
	}
	return n
}

// small returns ±lo × 10^exp in normal form.
func small(neg bool, lo uint64, exp int) Decimal {
	if lo == 0 {
		return Decimal{}
	}
	lo, exp = trimZeros(lo, exp)
	if lo >= 1e19 { // 20 digits: kept as text, the one form of such numbers
		return Decimal{big: strconv.FormatUint(lo, 10), exp: exp32(exp), neg: neg}
	}
	return Decimal{lo: lo, exp: exp32(exp), neg: neg}
}

// inv5 is the inverse of 5 modulo 2^64: for m divisible by 5, m*inv5 is
// m/5, and for any other m it is above maxDiv5.
const (
	inv5    = 0xCCCCCCCCCCCCCCCD
	maxDiv5 = ^uint64(0) / 5
)

// trimZeros drops the trailing decimal zeros of lo (not 0), raising exp by
// as many. It multiplies instead of dividing by 10: a 64-bit division by a
// constant is a long sequence of 32-bit steps in a Wasm guest.
func trimZeros(lo uint64, exp int) (uint64, int) {
	for lo&1 == 0 {
		q := (lo >> 1) * inv5 // lo/10 when lo is a multiple of 10
		if q > maxDiv5 {
			break
		}
		lo, exp = q, exp+1
	}
	return lo, exp
}

// The errors of ParseDecimal and Valid.
var (
	// ErrDecimalSyntax: the text is not a decimal number.
	ErrDecimalSyntax = errors.New("decimal: not a number")
	// ErrDecimalDigits: more significant digits than DynamoDB stores.
	ErrDecimalDigits = errors.New("decimal: more than 38 significant digits")
	// ErrDecimalRange: a magnitude DynamoDB cannot store.
	ErrDecimalRange = errors.New("decimal: outside the range DynamoDB stores (1E-130 to 1E+126)")
)

// DecimalDigits is the most significant digits DynamoDB stores in a number.
const DecimalDigits = 38

// maxExponent bounds the exponent read from a text; larger ones saturate
// (and fail the range check unless the number is zero).
const maxExponent = 1000000

// ParseDecimal parses a DynamoDB number: an optional sign, digits with an
// optional decimal point, an optional exponent ("12.50", "-3", "1.5E+3").
// It fails with ErrDecimalSyntax, ErrDecimalDigits or ErrDecimalRange.
func ParseDecimal(s string) (Decimal, error) {
	d, ok := parseDecimal(s)
	if !ok {
		return Decimal{}, fmt.Errorf("%w: %q", ErrDecimalSyntax, s)
	}
	if err := d.Valid(); err != nil {
		return Decimal{}, fmt.Errorf("%w: %q", err, s)
	}
	return d, nil
}

// MustDecimal is ParseDecimal panicking on an error, for constants and tests.
func MustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DecimalFromInt returns the Decimal of an integer.
func DecimalFromInt(v int64) Decimal {
	d, _ := parseDecimal(strconv.FormatInt(v, 10))
	return d
}

// Valid reports whether DynamoDB can store d: nil, ErrDecimalDigits or
// ErrDecimalRange.
func (d Decimal) Valid() error {
	// A coefficient of at most 19 digits with an exponent from -130 to
	// 107 always fits (zero's exponent is 0): one compare, inlined.
	if d.big == "" && uint(int(d.exp)+130) <= 130+125-(smallDigits-1) {
		return nil
	}
	return validSlow(&d)
}

//go:noinline
func validSlow(d *Decimal) error {
	n := d.digits()
	if n == 0 {
		return nil
	}
	if n > DecimalDigits {
		return ErrDecimalDigits
	}
	if d.exp < -130 || int(d.exp)+n-1 > 125 {
		return ErrDecimalRange
	}
	return nil
}

// String returns d in plain notation, as DynamoDB returns numbers: no
// exponent, no trailing zeros after the point ("12.5", "-0.001", "300").
func (d Decimal) String() string {
	var buf [48]byte
	return string(d.appendText(buf[:0]))
}

// appendText appends String's text to dst.
func (d Decimal) appendText(dst []byte) []byte {
	if d.IsZero() {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	var buf [20]byte
	c := buf[:0]
	if d.big != "" {
		c = []byte(d.big)
	} else {
		c = strconv.AppendUint(c, d.lo, 10)
	}
	switch p := len(c) + int(d.exp); {
	case d.exp >= 0:
		dst = append(dst, c...)
		for i := int32(0); i < d.exp; i++ {
			dst = append(dst, '0')
		}
	case p > 0:
		dst = append(dst, c[:p]...)
		dst = append(dst, '.')
		dst = append(dst, c[p:]...)
	default:
		dst = append(dst, '0', '.')
		for i := 0; i < -p; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, c...)
	}
	return dst
}

// Number returns d as a Number (its String).
func (d Decimal) Number() Number { return Number(d.String()) }

// Float64 returns the float64 nearest to d.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.lo == 0 && d.big == "" }

// Sign returns -1, 0 or +1.
func (d Decimal) Sign() int {
	switch {
	case d.IsZero():
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// Neg returns -d.
func (d Decimal) Neg() Decimal {
	if !d.IsZero() {
		d.neg = !d.neg
	}
	return d
}

// Abs returns |d|.
func (d Decimal) Abs() Decimal { d.neg = false; return d }

// Equal reports whether d and o are the same number.
func (d Decimal) Equal(o Decimal) bool { return d == o }

// Cmp returns -1, 0 or +1 as d is less than, equal to or greater than o.
func (d Decimal) Cmp(o Decimal) int {
	if ds, os := d.Sign(), o.Sign(); ds != os {
		if ds < os {
			return -1
		}
		return 1
	}
	c := cmpMag(d, o)
	if d.neg {
		return -c
	}
	return c
}
