package keys

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

func TestY8_EveryFormOfANumberHasOneCanonicalText(t *testing.T) {
	for want, forms := range map[string][]string{"1": {"1", "1.0", "1e0", "10E-1"}, "11/5": {"2.2", "2.20", "0.22e1"}, "-12": {"-12", "-12.000"}} {
		for _, s := range forms {
			if got, ok := CanonicalNumber(s); !ok || got != want {
				t.Errorf("CanonicalNumber(%q) = %q, %v; want %q", s, got, ok, want)
			}
		}
	}
	if _, ok := CanonicalNumber("abc"); ok {
		t.Error("abc read as a number")
	}
}
