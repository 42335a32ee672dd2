package guest

// Reading DynamoDB number texts into Decimals: a fast path for the common
// short forms that allocates nothing, and the general parser.

func parseDecimal(s string) (Decimal, bool) {
	if d, ok := parseSmall(s); ok {
		return d, true
	}
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
		return Decimal{lo: v, exp: exp, neg: neg}
	}
	return Decimal{big: string(digits[lo:hi]), exp: exp, neg: neg}
}

// parseSmall parses the common forms without allocating: at most 19
// significant digits, an optional point, an optional short exponent. ok
// false: use the general parser (which also reports syntax errors).
func parseSmall(s string) (Decimal, bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	n, sig, frac, point := 0, 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			n++
			if point {
				frac++
			}
			if sig > 0 || c != '0' {
				sig++
				if sig > smallDigits {
					return Decimal{}, false
				}
				v = v*10 + uint64(c-'0')
			}
			continue
		case c == '.' && !point:
			point = true
			continue
		}
		break
	}
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
		if i == len(s) || len(s)-i > 6 {
			return Decimal{}, false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return Decimal{}, false
			}
			exp = exp*10 + int(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	return small(neg, v, exp-frac), true
}
