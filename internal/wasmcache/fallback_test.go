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

// TestY8_SharedTestCacheIsTheDirectoryTheRunNames: with
// $DYNAFOLD_TEST_CACHE_DIR set, NewTestCache returns that directory
// (created 0700 when missing) with one key file (0600) that every process
// of the run reads, and its remove leaves the directory to whoever named
// it.
func TestY8_SharedTestCacheIsTheDirectoryTheRunNames(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "run-cache")
	t.Setenv(wasmcache.TestCacheDirEnv, shared)
	dir, keyFile, remove, err := wasmcache.NewTestCache()
	if err != nil {
		t.Fatal(err)
	}
	if dir != shared || keyFile != filepath.Join(shared, wasmcache.KeyFileName) {
		t.Fatalf("NewTestCache = %s, %s; want %s and its key file", dir, keyFile, shared)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory: %v, want 0700", err)
	}
	key, err := os.ReadFile(keyFile)
	if fi, serr := os.Stat(keyFile); err != nil || serr != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want a 0600 file", err, serr)
	}
	remove()
	dir2, _, _, err := wasmcache.NewTestCache()
	if err != nil || dir2 != dir {
		t.Fatalf("second NewTestCache = %s, %v; want %s", dir2, err, dir)
	}
	if again, err := os.ReadFile(keyFile); err != nil || !bytes.Equal(again, key) {
		t.Errorf("the key changed between two processes' NewTestCache (%v): each would refuse the other's code", err)
	}
}
