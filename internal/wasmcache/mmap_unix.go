//go:build unix

package wasmcache

import (
	"os"
	"syscall"
)

// mapped calls fn with the first size bytes of f, mapped read-only rather
// than copied (compiled code runs to many MB, read at every cold start).
func mapped(f *os.File, size int64, fn func([]byte)) error {
	if size == 0 {
		fn(nil)
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	defer syscall.Munmap(b)
	fn(b)
	return nil
}
