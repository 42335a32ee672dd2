//go:build !wasip1

package examples_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// TestMain gives the plugin loads of this package's tests whose
// configuration names no compilation cache one cache per test process
// (wasmcache.SetFallbackForTests): each example module compiles once, not
// at every test that loads it.
func TestMain(m *testing.M) {
	dir, keyFile, remove, err := wasmcache.NewTestCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test compilation cache:", err)
		os.Exit(2)
	}
	undo := wasmcache.SetFallbackForTests(dir, keyFile)
	code := m.Run()
	undo()
	remove()
	os.Exit(code)
}
