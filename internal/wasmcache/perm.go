package wasmcache

import (
	"errors"
	"fmt"
	"os"
)

// ErrUnsafe reports a cache directory or file that someone other than this
// user could change; the cache is not used. The error is an *UnsafeError.
var ErrUnsafe = errors.New("unsafe compilation cache")

// UnsafeError is a cache directory or file refused by CheckPath.
type UnsafeError struct {
	Path string // the directory or file
	Kind string // "directory" or "file"
	Why  string // what is wrong with it
	Fix  string // the command that fixes it
}

// Error implements error.
func (e *UnsafeError) Error() string {
	return fmt.Sprintf("compilation cache %s %s is %s: whoever can change it can run code in this host; fix it with `%s`",
		e.Kind, e.Path, e.Why, e.Fix)
}

// Is reports whether target is ErrUnsafe.
func (e *UnsafeError) Is(target error) bool { return target == ErrUnsafe }

// CheckPath refuses (*UnsafeError) a cache directory or file that is
// writable by group or others (unless on a read-only mount) or owned by a
// user other than this one and root. It follows a symbolic link at path.
func CheckPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return check(path, fi)
}

// checkFile is CheckPath for an open file (no race with a rename).
func checkFile(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, Kind: "file", Why: "not a regular file", Fix: "rm " + path}
	}
	return check(path, fi)
}
