//go:build !wasm

package guest

// le32 returns the 4 bytes of s at o (which the caller checked) as a
// little-endian integer.
func le32(s string, o int) uint32 {
	return uint32(s[o]) | uint32(s[o+1])<<8 | uint32(s[o+2])<<16 | uint32(s[o+3])<<24
}

// eqStr reports whether a == b.
func eqStr(a, b string) bool { return a == b }

// le64 returns the 8 bytes of s at o (which the caller checked) as a
// little-endian integer.
func le64(s string, o int) uint64 {
	return uint64(le32(s, o)) | uint64(le32(s, o+4))<<32
}
