package wasmcache_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// TestW5_FallbackCacheServesOnlyLoadsWithoutOne: the test processes'
// fallback cache (SetFallbackForTests) opens, writable and with its key,
// for a load whose configuration names no cache directory, and for no
// other; without it, and after undo or inside WithoutFallbackForTests, a
// load without a directory has no cache. NewTestCache's key is the file
// the directory keeps, 0600.
func TestW5_FallbackCacheServesOnlyLoadsWithoutOne(t *testing.T) {
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	if c := wasmcache.OpenOrWarn("", false, "", "p", log); c != nil {
		t.Fatalf("no fallback set: cache %s, want none", c.Dir())
	}
	dir, keyFile, remove, err := wasmcache.NewTestCache()
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if keyFile != filepath.Join(dir, wasmcache.KeyFileName) {
		t.Errorf("key file %s, want %s in the directory", keyFile, wasmcache.KeyFileName)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}

	undo := wasmcache.SetFallbackForTests(dir, keyFile)
	c := wasmcache.OpenOrWarn("", false, "", "p", log)
	if c == nil || c.Dir() != dir || !c.Writable() {
		t.Fatalf("fallback set: cache %v, want %s writable", c, dir)
	}
	other := t.TempDir()
	if c := wasmcache.OpenOrWarn(other, false, "", "p", log); c == nil || c.Dir() != other {
		t.Errorf("a configured directory: cache %v, want %s", c, other)
	}
	wasmcache.WithoutFallbackForTests(func() {
		if c := wasmcache.OpenOrWarn("", false, "", "p", log); c != nil {
			t.Errorf("WithoutFallbackForTests: cache %s, want none", c.Dir())
		}
	})
	if c := wasmcache.OpenOrWarn("", false, "", "p", log); c == nil {
		t.Error("the fallback is not back after WithoutFallbackForTests")
	}
	undo()
	if c := wasmcache.OpenOrWarn("", false, "", "p", log); c != nil {
		t.Errorf("after undo: cache %s, want none", c.Dir())
	}
}
