package wasmcache

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
)

// fallback is the cache of the loads whose configuration names none, when
// a test process set one (SetFallbackForTests); nil, always, in the host.
var fallback atomic.Pointer[fallbackCache]

type fallbackCache struct{ dir, keyFile string }

// SetFallbackForTests makes the loads of this process whose configuration
// names no cache directory use dir, a writable cache whose key is in
// keyFile, and returns a function that undoes it. It is for test processes
// that load the same modules many times (a command's tests run the command
// again and again): they compile each module once instead of at every
// load. It never changes a load whose configuration names a cache.
func SetFallbackForTests(dir, keyFile string) (undo func()) {
	old := fallback.Swap(&fallbackCache{dir: dir, keyFile: keyFile})
	return func() { fallback.Store(old) }
}

// WithoutFallbackForTests runs f with no fallback cache: for a test that
// asserts what a load without a cache does.
func WithoutFallbackForTests(f func()) {
	old := fallback.Swap(nil)
	defer fallback.Store(old)
	f()
}

// NewTestCache creates a writable cache directory under the system's
// temporary directory, with its key in the key file a cache directory
// keeps (KeyFileName), for SetFallbackForTests; so a test may also name
// the directory in a configuration without a key. remove removes it.
func NewTestCache() (dir, keyFile string, remove func(), err error) {
	dir, err = os.MkdirTemp("", "dynafold-test-cache-")
	if err != nil {
		return "", "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	keyFile = filepath.Join(dir, KeyFileName)
	if err := GenerateKeyFile(keyFile); err != nil {
		remove()
		return "", "", nil, fmt.Errorf("test cache key: %w", err)
	}
	return dir, keyFile, remove, nil
}

// fallbackFor returns the cache directory and key file a load without a
// configured cache uses: the fallback a test set, else none ("").
func fallbackFor() (dir, keyFile string) {
	if f := fallback.Load(); f != nil {
		return f.dir, f.keyFile
	}
	return "", ""
}
