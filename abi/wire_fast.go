package abi

// Fast paths, small enough to be inlined into a caller's loop (a call costs
// much more inside a Wasm guest than natively). Each returns ok false,
// having consumed nothing, when the plain method must be used instead.

// ShortString reads a string shorter than 128 bytes.
func (r *Reader) ShortString() (s string, ok bool) {
	if o := r.off; o < len(r.s) {
		if n := int(r.s[o]); n < 0x80 && n < len(r.s)-o {
			r.off = o + 1 + n
			return r.s[o+1 : o+1+n], true
		}
	}
	return "", false
}

// NextByte reads one byte.
func (r *Reader) NextByte() (b byte, ok bool) {
	if o := r.off; o < len(r.s) {
		r.off = o + 1
		return r.s[o], true
	}
	return 0, false
}

// SmallUvarint reads a varint below 128.
func (r *Reader) SmallUvarint() (x uint64, ok bool) {
	if o := r.off; o < len(r.s) && r.s[o] < 0x80 {
		r.off = o + 1
		return uint64(r.s[o]), true
	}
	return 0, false
}

// Sized reads a 4-byte little-endian length and that many bytes.
func (r *Reader) Sized() (s string, ok bool) {
	if o := r.off; o+4 <= len(r.s) {
		b := r.s[o : o+4]
		n := int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		if n <= len(r.s)-o-4 {
			r.off = o + 4 + n
			return r.s[o+4 : o+4+n], true
		}
	}
	return "", false
}

// Unread steps back over the byte just read by NextByte or Byte.
func (r *Reader) Unread() {
	if r.off > 0 && r.err == nil {
		r.off--
	}
}
