package expr

import "strings"

// Decimals with a fraction, as items carry them ("12.5", "-0.05"), take
// the path plainInt opens for integers: normalised, compared and sized
// from their text, without math/big.

// plainNum reports whether s is a number of at most 38 digits in
// DynamoDB's normal form, an integer (plainInt) or a decimal with a
// fraction ("12.5", "-0.05"; never "12.50", "012.5", "1.", ".5", "+1.5"
// or "1e3"), and returns its integer and fraction digits (fp "" for an
// integer).
func plainNum(s string) (ip, fp string, ok bool) {
	if x, ok := plainInt(s); ok {
		return x, "", true
	}
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	dot := strings.IndexByte(d, '.')
	if dot <= 0 || dot == len(d)-1 || len(d)-1 > maxDigits {
		return "", "", false
	}
	ip, fp = d[:dot], d[dot+1:]
	if (ip[0] == '0' && len(ip) > 1) || fp[len(fp)-1] == '0' || !allDigits(ip) || !allDigits(fp) {
		return "", "", false
	}
	return ip, fp, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// normalPlain returns the normal form of s when it is a plain number
// (plainNum) once the trailing zeros of its fraction are dropped ("12.50",
// "3.0", "0.00").
func normalPlain(s string) (string, bool) {
	if _, _, ok := plainNum(s); ok {
		return s, true
	}
	if strings.IndexByte(s, '.') < 0 || len(s) > maxDigits+1 {
		return "", false
	}
	t := strings.TrimRight(s, "0")
	t = strings.TrimSuffix(t, ".")
	if _, _, ok := plainNum(t); ok && t != "" && t != "-" {
		return t, true
	}
	return "", false
}

// cmpPlain compares two plain numbers a and b (plainNum) with integer
// digits ai, bi and fraction digits af, bf.
func cmpPlain(a, b, ai, af, bi, bf string) int {
	na, nb := a[0] == '-', b[0] == '-'
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	c := len(ai) - len(bi)
	if c == 0 {
		c = strings.Compare(ai, bi)
	}
	if c == 0 {
		c = strings.Compare(af, bf)
	}
	if c > 0 {
		c = 1
	} else if c < 0 {
		c = -1
	}
	if na {
		return -c
	}
	return c
}

// plainSize is decimal.digits of a plain number: its significant digits,
// leading and trailing zeros not counted.
func plainSize(ip, fp string) int {
	if fp == "" {
		return plainDigits(ip)
	}
	return len(strings.TrimLeft(ip+fp, "0"))
}
