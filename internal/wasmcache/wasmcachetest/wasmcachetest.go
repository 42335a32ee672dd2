// Package wasmcachetest helps tests of read-only compilation caches.
package wasmcachetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// Snapshot lists every file under dir with its size and modification time,
// so a test can assert that a read-only cache was not written.
func Snapshot(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, fmt.Sprintf("%s %d %d %s", rel, info.Size(), info.ModTime().UnixNano(), info.Mode()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// MakeReadOnly returns a read-only view of dir, in a way the test's user
// must respect: for root, who ignores permissions, a read-only bind mount
// (undone at the end of the test); for others, the directory tree made
// 0555. Where root may not mount (no CAP_SYS_ADMIN) it returns dir and
// replaces wasmcache.Probe to answer EROFS for it, which it reports in how.
func MakeReadOnly(t testing.TB, dir string) (view, how string) {
	t.Helper()
	wasmcache.ForgetProbes()
	t.Cleanup(wasmcache.ForgetProbes)
	if os.Geteuid() != 0 {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = os.Chmod(path, 0o555)
			}
			return err
		})
		t.Cleanup(func() {
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					_ = os.Chmod(path, 0o755)
				}
				return nil
			})
		})
		return dir, "chmod 0555"
	}
	view = t.TempDir()
	err := syscall.Mount(dir, view, "", syscall.MS_BIND, "")
	if err == nil {
		t.Cleanup(func() { _ = syscall.Unmount(view, syscall.MNT_DETACH) })
		err = syscall.Mount("", view, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	}
	if err == nil {
		if f, werr := os.CreateTemp(view, "x"); werr == nil || !errors.Is(werr, syscall.EROFS) {
			if f != nil {
				f.Close()
			}
			t.Fatalf("a read-only bind mount of %s is writable: %v", dir, werr)
		}
		return view, "read-only bind mount"
	}
	probe := wasmcache.Probe
	wasmcache.Probe = func(d string) error {
		if d == dir {
			return &fs.PathError{Op: "open", Path: d, Err: syscall.EROFS}
		}
		return probe(d)
	}
	t.Cleanup(func() { wasmcache.Probe = probe })
	return dir, fmt.Sprintf("simulated EROFS (root may not mount here: %v)", err)
}
