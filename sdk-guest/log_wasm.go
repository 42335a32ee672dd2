//go:build wasip1

package guest

import "unsafe"

// logImport is the host's dynafold.log (ABI.md §7). It is linked into a
// module only when something reachable calls it.
//
//go:wasmimport dynafold log
//go:noescape
func logImport(level int32, ptr unsafe.Pointer, n uint32)

func hostLog(level Level, msg string) {
	logImport(int32(level), unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
}
