package determinism

import (
	"bytes"
	"testing"
)

// TestW4_RandRepeatsAfterReset: the same bytes after every Reset, whatever
// was read before, and not all zero.
func TestW4_RandRepeatsAfterReset(t *testing.T) {
	var r Rand
	r.Reset()
	a := make([]byte, 37)
	r.Read(a)
	r.Read(make([]byte, 100)) // history
	r.Reset()
	b := make([]byte, 37)
	r.Read(b)
	if !bytes.Equal(a, b) || bytes.Equal(a, make([]byte, 37)) {
		t.Fatalf("after Reset: %x, first: %x", b, a)
	}
	if s, ns := Epoch(); s != 0 || ns != 0 {
		t.Fatalf("Epoch() = %d, %d", s, ns)
	}
	if !NearLimit(481, 512) || NearLimit(479, 512) {
		t.Fatal("NearLimit: 481 of 512 is near, 479 is not")
	}
}

// TestW4_ClockMovesOnlyWhenTheGuestSleeps: reads do not move the clock; a
// sleep moves it by exactly the time asked for.
func TestW4_ClockMovesOnlyWhenTheGuestSleeps(t *testing.T) {
	var c Clock
	t0 := c.Nanotime()
	if t0 == 0 || c.Nanotime() != t0 {
		t.Fatalf("reads moved the clock or it starts at zero: %d, %d", t0, c.Nanotime())
	}
	c.Nanosleep(30e9)
	c.Nanosleep(-5)
	if got := c.Nanotime() - t0; got != 30e9 {
		t.Fatalf("after sleeping 30 s the clock moved %d ns", got)
	}
}
