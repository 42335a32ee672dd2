package swap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// StepSource is the step of a module file the source refused before it
// was read as a module (CandidateError.Step): a DirSource's file that is
// a symlink out of the watched directory, not a regular file, or over the
// size cap.
const StepSource = "source"

// ErrSourceRefused is matched (errors.Is) by a *CandidateError at
// StepSource.
var ErrSourceRefused = errors.New("module file refused")

// File times come from a coarse clock: a write within one tick of the
// last read can leave a file's identity as it was. A DirSource reads a
// file again, whatever its identity, while its times are within the
// window of the last read: racyWindow on file systems with sub-second
// times (a tick is a few milliseconds on Linux), racyWindowCoarse on
// those that keep whole seconds (some keep two).
const (
	racyWindow       = 50 * time.Millisecond
	racyWindowCoarse = 2 * time.Second
)

// fileID is what identifies a version of a file without reading it.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime time.Time
}

// refusedFile is a module file the directory's rules refuse, and why.
type refusedFile struct {
	id  fileID
	why string
}

func (r *refusedFile) Error() string { return r.why }

// racy reports whether the file's times are too close to the last read
// for an unchanged identity to prove an unchanged file. The change time
// cannot be set back (Chtimes sets it to now), so a write after the read
// gives a change time of at least the read's time less one tick.
func (d *DirSource) racy(id fileID) bool {
	window := racyWindow
	if id.ctime.Nanosecond() == 0 && id.mtime.Nanosecond() == 0 {
		window = racyWindowCoarse
	}
	edge := d.readAt.Add(-window)
	return !id.ctime.Before(edge) || !id.mtime.Before(edge)
}

// openFlags opens the module for reading without blocking on a named pipe
// put in its place (it is then refused as not a regular file).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// open opens the module file through the watched directory's root, so no
// symlink can lead the open out of it. The root refuses absolute symlinks
// too: one that resolves inside the directory is opened by the path it
// resolves to, through the root still. A symlink leading out is a
// *refusedFile.
func (d *DirSource) open() (*os.File, error) {
	f, err := d.root.OpenFile(d.name, openFlags, 0)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	lst, lerr := d.root.Lstat(d.name)
	if lerr != nil || lst.Mode()&fs.ModeSymlink == 0 {
		return nil, err
	}
	resolved, rerr := filepath.EvalSymlinks(d.path)
	if rerr != nil {
		target, _ := os.Readlink(d.path)
		resolved = target
	} else if rel, rerr := filepath.Rel(d.realDir, resolved); rerr == nil && filepath.IsLocal(rel) {
		return d.root.OpenFile(rel, openFlags, 0)
	}
	return nil, &refusedFile{id: identity(lst), why: fmt.Sprintf(
		"it is a symlink to %s, outside the watched directory %s: put the module itself in the directory (write it to a temporary file there and rename it into place)",
		resolved, d.dir)}
}
