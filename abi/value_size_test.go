package abi

import (
	"testing"
	"unsafe"
)

// TestW1_ValueFitsAMapSlot keeps a Value within the 128 bytes that Go maps
// store in place (beyond that every entry of an Item is a separate
// allocation), and checks that decoding an item of eight attributes
// allocates only its map.
func TestW1_ValueFitsAMapSlot(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && unsafe.Sizeof(Value{}) > 128 {
		t.Fatalf("Value takes %d bytes, more than the 128 a map stores in place", unsafe.Sizeof(Value{}))
	}
	enc := AppendOptItem(nil, Item{"a": S("1"), "b": N("2"), "c": S("3"), "d": N("4"),
		"e": S("5"), "f": N("6"), "g": Bool(true), "h": S("8")})
	s := string(enc)
	allocs := testing.AllocsPerRun(100, func() {
		r := Reader{s: s}
		if it := r.OptItem(); len(it) != 8 {
			t.Fatalf("decoded %d attributes", len(it))
		}
	})
	if allocs > 2 {
		t.Errorf("decoding an item of 8 attributes allocates %v times, want at most 2 (the map)", allocs)
	}
}
