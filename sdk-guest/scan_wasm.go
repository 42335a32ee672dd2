//go:build wasm

package guest

import "unsafe"

// le32 returns the 4 bytes of s at o (which the caller checked) as a
// little-endian integer, in one load: Wasm is little-endian and allows
// unaligned loads.
func le32(s string, o int) uint32 {
	return *(*uint32)(unsafe.Pointer(unsafe.StringData(s[o:])))
}

// eqStr reports whether a == b, without the two calls and the byte loop
// of the runtime's comparison: strings of up to 16 bytes are compared with
// at most four overlapping loads, all within the strings.
func eqStr(a, b string) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n == 0 {
		return true
	}
	pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
	switch {
	case n >= 8 && n <= 16:
		return *(*uint64)(pa) == *(*uint64)(pb) &&
			*(*uint64)(unsafe.Add(pa, n-8)) == *(*uint64)(unsafe.Add(pb, n-8))
	case n >= 4 && n < 8:
		return *(*uint32)(pa) == *(*uint32)(pb) &&
			*(*uint32)(unsafe.Add(pa, n-4)) == *(*uint32)(unsafe.Add(pb, n-4))
	case n < 4:
		return a[0] == b[0] && a[n/2] == b[n/2] && a[n-1] == b[n-1]
	}
	return a == b
}

// le64 returns the 8 bytes of s at o (which the caller checked) as a
// little-endian integer, in one load.
func le64(s string, o int) uint64 {
	return *(*uint64)(unsafe.Pointer(unsafe.StringData(s[o:])))
}
