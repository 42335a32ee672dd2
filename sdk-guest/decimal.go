package guest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number, the arithmetic type of DynamoDB
// numbers (N): money, quantities, anything summed where float64 would drift
// (0.1 + 0.2 is 0.30000000000000004 in float64, 0.3 in Decimal).
//
// Arithmetic (Add, Sub, Mul, Neg) is exact and unbounded; Round brings a
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
	coef string // the significant digits, no leading or trailing zeros; "" is zero
	exp  int    // the value is ±coef × 10^exp
	neg  bool
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

func parseDecimal(s string) (Decimal, bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	digits := make([]byte, 0, len(s))
	n, frac, point := 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n++
			if point {
				frac++
			}
			if c != '0' || len(digits) > 0 {
				digits = append(digits, c)
			}
		case c == '.' && !point:
			point = true
		default:
			goto exponent
		}
	}
exponent:
	if n == 0 {
		return Decimal{}, false
	}
	exp := 0
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Decimal{}, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return Decimal{}, false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return Decimal{}, false
			}
			if exp < maxExponent {
				exp = exp*10 + int(c-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	return normal(neg, digits, exp-frac), true
}

// normal returns ±digits × 10^exp in normal form; digits may have leading
// and trailing zeros and is not kept.
func normal(neg bool, digits []byte, exp int) Decimal {
	lo, hi := 0, len(digits)
	for lo < hi && digits[lo] == '0' {
		lo++
	}
	for hi > lo && digits[hi-1] == '0' {
		hi--
		exp++
	}
	if lo == hi {
		return Decimal{}
	}
	return Decimal{coef: string(digits[lo:hi]), exp: exp, neg: neg}
}

// Valid reports whether DynamoDB can store d: nil, ErrDecimalDigits or
// ErrDecimalRange.
func (d Decimal) Valid() error {
	if d.coef == "" {
		return nil
	}
	if len(d.coef) > DecimalDigits {
		return ErrDecimalDigits
	}
	if d.exp < -130 || d.exp+len(d.coef)-1 > 125 {
		return ErrDecimalRange
	}
	return nil
}

// String returns d in plain notation, as DynamoDB returns numbers: no
// exponent, no trailing zeros after the point ("12.5", "-0.001", "300").
func (d Decimal) String() string {
	if d.coef == "" {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	switch p := len(d.coef) + d.exp; {
	case d.exp >= 0:
		b.WriteString(d.coef)
		for i := 0; i < d.exp; i++ {
			b.WriteByte('0')
		}
	case p > 0:
		b.WriteString(d.coef[:p])
		b.WriteByte('.')
		b.WriteString(d.coef[p:])
	default:
		b.WriteString("0.")
		for i := 0; i < -p; i++ {
			b.WriteByte('0')
		}
		b.WriteString(d.coef)
	}
	return b.String()
}

// Number returns d as a Number (its String).
func (d Decimal) Number() Number { return Number(d.String()) }

// Float64 returns the float64 nearest to d.
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// IsZero reports whether d is 0.
func (d Decimal) IsZero() bool { return d.coef == "" }

// Sign returns -1, 0 or +1.
func (d Decimal) Sign() int {
	switch {
	case d.coef == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// Neg returns -d.
func (d Decimal) Neg() Decimal {
	if d.coef != "" {
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
