package guest

// Reading DynamoDB number texts into Decimals: a fast path for the common
// short forms that allocates nothing, and the general parser.

func parseDecimal(s string) (Decimal, bool) {
	if d, ok := parseSmall(s); ok {
		return d, true
	}
	return parseGeneral(s)
}

// parseGeneral parses any decimal text on digit strings.
func parseGeneral(s string) (Decimal, bool) {
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
	if hi-lo <= smallDigits {
		var v uint64
		for _, c := range digits[lo:hi] {
			v = v*10 + uint64(c-'0')
		}
		return Decimal{lo: v, exp: exp32(exp), neg: neg}
	}
	return Decimal{big: string(digits[lo:hi]), exp: exp32(exp), neg: neg}
}

// parseSmall parses the common forms without allocating: at most 19
// digits, an optional point, an optional exponent of at most 6 digits. ok
// false: use the general parser (which also reports syntax errors).
//
// It is written for Go's Wasm port: two tight digit loops, no call, and
// trailing zeros dropped with multiplications (trimZeros) rather than
// divisions.
func parseSmall(s string) (Decimal, bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	start := i
	var v uint64
	for ; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
	}
	n, exp := i-start, 0
	if i < len(s) && s[i] == '.' {
		i++
		frac := i
		for ; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			v = v*10 + uint64(c)
		}
		n += i - frac
		exp = frac - i
	}
	if n == 0 || n > smallDigits {
		return Decimal{}, false
	}
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
		if i == len(s) || len(s)-i > 6 {
			return Decimal{}, false
		}
		e := 0
		for ; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				return Decimal{}, false
			}
			e = e*10 + int(c)
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if v == 0 {
		return Decimal{}, true
	}
	v, exp = trimZeros(v, exp)
	return Decimal{lo: v, exp: int32(exp), neg: neg}, true // |exp| < 1e6 + 19
}
