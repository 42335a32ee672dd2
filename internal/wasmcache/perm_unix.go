//go:build unix

package wasmcache

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// check refuses a cache directory or file that someone other than this
// user (or root) could change: writable by group or others, or owned by
// another user. On a read-only mount nobody can change it, and the mode
// bits do not matter (a Lambda package's files carry whatever its zip
// said).
func check(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	kind, fix := "file", "chmod 600"
	if fi.IsDir() {
		kind, fix = "directory", "chmod 700"
	}
	uid := os.Geteuid()
	if int(st.Uid) != uid && st.Uid != 0 {
		return &UnsafeError{Path: path, Kind: kind, Why: fmt.Sprintf("owned by uid %d, not this user (uid %d) or root", st.Uid, uid),
			Fix: fmt.Sprintf("chown %d %s", uid, path)}
	}
	if fi.Mode().Perm()&0o022 != 0 && !readOnlyMount(path) {
		return &UnsafeError{Path: path, Kind: kind, Why: fmt.Sprintf("writable by group or others (mode %04o)", fi.Mode().Perm()),
			Fix: fix + " " + path}
	}
	return nil
}
