//go:build !unix

package wasmcache

import (
	"io"
	"os"
)

// mapped calls fn with the first size bytes of f, read into memory.
func mapped(f *os.File, size int64, fn func([]byte)) error {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return err
	}
	fn(b)
	return nil
}
