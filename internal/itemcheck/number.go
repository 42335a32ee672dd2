package itemcheck

import (
	"fmt"
	"strconv"
	"strings"
)

// Number reports what keeps DynamoDB from storing s as a number: not the
// text of a number ([+-]digits[.digits][e[+-]digits], no spaces, no NaN or
// Infinity), more than 38 significant digits, or a magnitude outside 1E-130
// .. 9.99…E+125. It returns "" when DynamoDB stores it.
func Number(s string) string {
	sig, adj, ok := digits(s)
	switch {
	case !ok:
		return "is not a number DynamoDB can store: write decimal text such as \"12.5\", \"-3\" or \"1E+6\""
	case sig > MaxDigits:
		return fmt.Sprintf("has %d significant digits, more than DynamoDB's %d", sig, MaxDigits)
	case sig > 0 && adj > maxAdjExp:
		return "is larger in magnitude than DynamoDB stores (at most 9.9999999999999999999999999999999999999E+125)"
	case sig > 0 && adj < minAdjExp:
		return "is smaller in magnitude than DynamoDB stores (at least 1E-130, or 0)"
	}
	return ""
}

// digits parses number text and returns its significant digits (0 for
// zero) and the exponent of its first significant digit; ok is false for
// text that is no number. It allocates nothing.
func digits(s string) (sig, adjExp int, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	first, last := -1, -1 // positions of the first and last non-zero digit, counted over all digits
	n, point := 0, -1     // digits seen; how many came before the point
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if c != '0' {
				if first < 0 {
					first = n
				}
				last = n
			}
			n++
			continue
		case c == '.' && point < 0:
			point = n
			continue
		}
		break
	}
	if n == 0 {
		return 0, 0, false
	}
	if point < 0 {
		point = n
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, 0, false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			if exp < 1e6 { // beyond any range; the digits still count
				exp = exp*10 + int(c-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, 0, false
	}
	if first < 0 {
		return 0, 0, true // zero
	}
	return last - first + 1, point - first - 1 + exp, true
}

// canonical is a valid number's value as text, the same for every text of
// one number ("1", "1.0", "10E-1" → "1E0"), to find duplicates in a set.
func canonical(s string) string {
	sig, adj, _ := digits(s)
	if sig == 0 {
		return "0"
	}
	var b strings.Builder
	if s[0] == '-' {
		b.WriteByte('-')
	}
	kept, started := 0, false
	for i := 0; i < len(s) && kept < sig; i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' {
			continue
		}
		if c != '0' {
			started = true
		}
		if started {
			b.WriteByte(c)
			kept++
		}
	}
	b.WriteString("E" + strconv.Itoa(adj))
	return b.String()
}
