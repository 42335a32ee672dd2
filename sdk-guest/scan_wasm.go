//go:build wasm

package guest

import "unsafe"

// le32 returns the 4 bytes of s at o (which the caller checked) as a
// little-endian integer, in one load: Wasm is little-endian and allows
// unaligned loads.
func le32(s string, o int) uint32 {
	return *(*uint32)(unsafe.Pointer(unsafe.StringData(s[o:])))
}
