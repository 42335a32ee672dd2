package guest

import (
	"strings"
	"testing"
)

// TestW2_EqStrMatchesEquality checks the Wasm build's string comparison
// (run with GOOS=wasip1 GOARCH=wasm and a WASI runtime) against ==, for
// every length up to 40 and a difference at every position.
func TestW2_EqStrMatchesEquality(t *testing.T) {
	base := strings.Repeat("abcdefghij", 5)
	for n := 0; n <= 40; n++ {
		a := base[:n]
		if !eqStr(a, strings.Clone(a)) {
			t.Fatalf("eqStr(%q, copy) = false", a)
		}
		if n > 0 && eqStr(a, base[:n-1]) {
			t.Fatalf("eqStr(%q, %q) = true", a, base[:n-1])
		}
		for i := 0; i < n; i++ {
			b := []byte(a)
			b[i] ^= 0x20
			if eqStr(a, string(b)) {
				t.Fatalf("eqStr(%q, %q) = true", a, b)
			}
		}
	}
}

// TestW2_ScannersRefuseWhatTheyCannotRead checks the inline readers'
// fallbacks: long strings, large varints, sizes past the end.
func TestW2_ScannersRefuseWhatTheyCannotRead(t *testing.T) {
	if s, o := shortStr("\x03abcd", 0); s != "abc" || o != 4 {
		t.Errorf("shortStr = %q %d", s, o)
	}
	for _, in := range []string{"", "\x05ab", "\x80\x01a", "\x03abc"[:3]} {
		if _, o := shortStr(in, 0); o >= 0 {
			t.Errorf("shortStr(%q) = %d", in, o)
		}
	}
	if _, o := shortStr("\x01a", -1); o >= 0 {
		t.Errorf("shortStr at -1 = %d", o)
	}
	if v, o := smallVarint("\x96\x01", 0); v != 150 || o != 2 {
		t.Errorf("smallVarint = %d %d", v, o)
	}
	for _, in := range []string{"", "\x80", "\x80\x00", "\x80\x80\x01"} {
		if _, o := smallVarint(in, 0); o >= 0 {
			t.Errorf("smallVarint(%q) = %d", in, o)
		}
	}
	if s, o := sized("\x02\x00\x00\x00xyz", 0); s != "xy" || o != 6 {
		t.Errorf("sized = %q %d", s, o)
	}
	for _, in := range []string{"\x02\x00\x00", "\x05\x00\x00\x00xy", "\x00\x00\x00\x80"} {
		if _, o := sized(in, 0); o >= 0 {
			t.Errorf("sized(%q) = %d", in, o)
		}
	}
}
