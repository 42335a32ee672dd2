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

// TestCacheDirEnv names a cache directory the test processes of one run
// share (make test sets it to a directory it creates and removes): when it
// is set, NewTestCache returns that directory, so a module one package's
// tests compiled serves another package's tests instead of compiling
// again. Its code is verified like any cache's (a manifest under the key
// the directory keeps); the processes write it concurrently as hosts
// sharing a writable cache do.
const TestCacheDirEnv = "DYNAFOLD_TEST_CACHE_DIR"

// NewTestCache creates a writable cache directory under the system's
// temporary directory, with its key in the key file a cache directory
// keeps (KeyFileName), for SetFallbackForTests; so a test may also name
// the directory in a configuration without a key. remove removes it.
// With $DYNAFOLD_TEST_CACHE_DIR set (TestCacheDirEnv) it returns that
// directory instead (created if missing, its key made by the first process
// that needs one), and remove leaves it to whoever set the variable.
func NewTestCache() (dir, keyFile string, remove func(), err error) {
	if shared := os.Getenv(TestCacheDirEnv); shared != "" {
		if dir, err = filepath.Abs(shared); err != nil {
			return "", "", nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", "", nil, fmt.Errorf("$%s: %w", TestCacheDirEnv, err)
		}
		if _, err := LoadKey(dir, "", true); err != nil {
			return "", "", nil, fmt.Errorf("$%s: test cache key: %w", TestCacheDirEnv, err)
		}
		return dir, filepath.Join(dir, KeyFileName), func() {}, nil
	}
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
