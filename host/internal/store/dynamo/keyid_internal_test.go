package dynamo

import (
	"math/big"
	"testing"
)

func TestY8_PlainIntegersAreTheirOwnCanonicalText(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "007", "-007", "1e3", "1.0", "", "-", "123456789012345678901234567890", "12345678901234567890123456789012345678", "+5"} {
		r, ok := new(big.Rat).SetString(s)
		canonical := ok && r.RatString() == s
		if plainInt(s) && !canonical {
			t.Errorf("plainInt(%q) = true, but big.Rat writes it %q", s, r.RatString())
		}
	}
	for _, s := range []string{"0", "7", "-12", "123456789012345678901234567890"} {
		if !plainInt(s) {
			t.Errorf("plainInt(%q) = false", s)
		}
	}
}
