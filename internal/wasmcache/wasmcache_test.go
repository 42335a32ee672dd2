package wasmcache_test

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

// TestW6_CacheThatOthersCanChangeIsRefused: a cache directory or key file
// writable by group or others, or owned by another user than this one or
// root, is refused with an *UnsafeError saying how to fix it; a directory
// this user owns with mode 0700 (or 0755) is used, and the key generated
// into it is 0600.
func TestW6_CacheThatOthersCanChangeIsRefused(t *testing.T) {
	t.Setenv(wasmcache.KeyEnv, "")
	os.Unsetenv(wasmcache.KeyEnv)
	for _, mode := range []fs.FileMode{0o777, 0o770, 0o757} {
		dir := t.TempDir()
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := wasmcache.Open(dir, false, "")
		wantUnsafe(t, err, dir, "writable by group or others", "chmod 700 "+dir)
	}

	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := wasmcache.Open(dir, false, "")
	if err != nil || !c.Writable() {
		t.Fatalf("a 0755 directory of this user: %v (writable %v)", err, c != nil && c.Writable())
	}
	key := filepath.Join(dir, wasmcache.KeyFileName)
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("generated key file: %v, %v; want mode 0600", fi, err)
	}
	if err := os.Chmod(key, 0o620); err != nil {
		t.Fatal(err)
	}
	_, err = wasmcache.Open(dir, false, "")
	wantUnsafe(t, err, key, "writable by group or others", "chmod 600 "+key)
	if err := os.Chmod(key, 0o644); err != nil { // readable by others: shipped read-only, as Lambda needs
		t.Fatal(err)
	}
	if _, err := wasmcache.Open(dir, false, ""); err != nil {
		t.Errorf("a key file readable by others: %v", err)
	}

	if os.Geteuid() == 0 {
		other := t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err = wasmcache.Open(other, true, "")
		wantUnsafe(t, err, other, "owned by uid 65534", "chown 0 "+other)
	} else {
		t.Log("not root: cannot give a directory to another user")
	}
}

// TestW6_ReadOnlyMountIsNotRefusedForItsModeBits: on a read-only mount no
// one can change a directory, whatever its mode bits (a Lambda package's
// files carry what its zip said).
func TestW6_ReadOnlyMountIsNotRefusedForItsModeBits(t *testing.T) {
	dir := t.TempDir()
	if err := wasmcache.GenerateKeyFile(filepath.Join(dir, wasmcache.KeyFileName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	view, how := wasmcachetest.MakeReadOnly(t, dir)
	err := wasmcache.CheckPath(view)
	if how != "read-only bind mount" {
		t.Logf("read-only by %s: the mode bits still count (%v)", how, err)
		return
	}
	if err != nil {
		t.Errorf("a 0777 directory on a read-only mount: %v", err)
	}
}

func wantUnsafe(t *testing.T, err error, path string, fragments ...string) {
	t.Helper()
	var ue *wasmcache.UnsafeError
	if !errors.As(err, &ue) || !errors.Is(err, wasmcache.ErrUnsafe) || ue.Path != path {
		t.Fatalf("error %v, want an *UnsafeError for %s", err, path)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q lacks %q", err, f)
		}
	}
}

// TestW6_BlobIsBoundToItsSubjectAndKey: a blob reads back only for the
// subject it was made from, with the key it was written with, unchanged.
func TestW6_BlobIsBoundToItsSubjectAndKey(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(wasmcache.KeyEnv, strings.Repeat("ab", 32))
	c, err := wasmcache.Open(dir, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, wasmcache.KeyFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a key file was written though the key came from $%s: %v", wasmcache.KeyEnv, err)
	}
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	if err := c.WriteBlob("test", a, []byte("made from a")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadBlob("test", a); err != nil || string(got) != "made from a" {
		t.Fatalf("ReadBlob: %q, %v", got, err)
	}
	if _, err := c.ReadBlob("test", b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a blob never written: %v", err)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "dynafold-test-*"))
	if len(entries) != 1 {
		t.Fatalf("blob files: %v", entries)
	}
	content, _ := os.ReadFile(entries[0])

	// Copied over another subject's name.
	other := strings.Replace(entries[0], filepath.Base(entries[0])[len("dynafold-test-"):], hexOf(b), 1)
	if err := os.WriteFile(other, content, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReadBlob("test", b)
	wantRefused(t, err, "not from this module")

	// Another key.
	t.Setenv(wasmcache.KeyEnv, strings.Repeat("cd", 32))
	c2, err := wasmcache.Open(dir, false, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c2.ReadBlob("test", a)
	wantRefused(t, err, "not written with this cache's key ($"+wasmcache.KeyEnv+")")

	// Changed content.
	changed := append([]byte(nil), content...)
	changed[len(changed)-1] ^= 1
	if err := os.WriteFile(entries[0], changed, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReadBlob("test", a)
	wantRefused(t, err, "content changed")
}

func wantRefused(t *testing.T, err error, fragment string) {
	t.Helper()
	if !errors.Is(err, wasmcache.ErrRefused) || !strings.Contains(err.Error(), fragment) {
		t.Errorf("error %v, want ErrRefused saying %q", err, fragment)
	}
}

func hexOf(sum [32]byte) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range sum {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// TestW6_KeyFromTheEnvironmentMustBeAKey: $DYNAFOLD_CACHE_KEY that is not
// 64 hex digits is refused with what it must be.
func TestW6_KeyFromTheEnvironmentMustBeAKey(t *testing.T) {
	t.Setenv(wasmcache.KeyEnv, "secret")
	_, err := wasmcache.Open(t.TempDir(), false, "")
	if !errors.Is(err, wasmcache.ErrNoKey) || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("error %v, want ErrNoKey saying a key is 64 hex digits", err)
	}
}
