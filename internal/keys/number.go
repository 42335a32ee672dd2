package keys

import (
	"math/big"
	"strings"
)

// CanonicalNumber returns the text every form of DynamoDB number s has
// ("1.0", "1" and "1e0" are one value to DynamoDB: "1"), and false when s
// is not a number. A plain integer is its own canonical text and costs no
// parse.
func CanonicalNumber(s string) (string, bool) {
	if plainInt(s) {
		return s, true // already as RatString writes it
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	return r.RatString(), true
}

// plainInt reports whether s is an integer in its shortest form ("0",
// "-12", never "-0", "007" or "1e3"): the text big.Rat's RatString gives it.
func plainInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 30 || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}
