package guest

// Inlinable readers of the encoding working on a string and an offset held
// in a local variable, for the per-event hot path (inside a Wasm guest a
// call, and every load and store through a Reader, costs several times what
// it does natively). Each returns a negative offset when the fast form does
// not apply; a negative offset makes every later read fail too, so a caller
// checks once, at the end, and falls back to abi.Reader.

// shortStr reads a str shorter than 128 bytes at o.
func shortStr(s string, o int) (string, int) {
	if uint(o) < uint(len(s)) {
		if n := int(s[o]); n < 0x80 && n < len(s)-o {
			return s[o+1 : o+1+n], o + 1 + n
		}
	}
	return "", -1
}

// sized reads a u32 length and that many bytes at o.
func sized(s string, o int) (string, int) {
	if o >= 0 && o+4 <= len(s) {
		if n := le32(s, o); uint64(n) <= uint64(len(s)-o-4) {
			return s[o+4 : o+4+int(n)], o + 4 + int(n)
		}
	}
	return "", -1
}

// smallVarint reads a uvarint of one or two bytes at o.
func smallVarint(s string, o int) (uint64, int) {
	if uint(o) < uint(len(s)) {
		b := s[o]
		if b < 0x80 {
			return uint64(b), o + 1
		}
		if o+1 < len(s) && s[o+1] < 0x80 && s[o+1] != 0 {
			return uint64(b&0x7f) | uint64(s[o+1])<<7, o + 2
		}
	}
	return 0, -1
}
