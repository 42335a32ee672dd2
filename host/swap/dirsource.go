package swap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultSettle is how long a DirSource waits for a file to stop changing
// before it reads it.
const DefaultSettle = 100 * time.Millisecond

// DefaultMaxModuleBytes is the largest module file a DirSource reads
// (64 MiB); a larger one is refused unread.
const DefaultMaxModuleBytes = 64 << 20

// DirSource is a plugin module in a local directory, watched with fsnotify
// (the directory, not the file, so a module renamed into place is seen).
// Replace the file by writing a temporary file in the same directory and
// renaming it: a module written in place may be read half-written, which
// the pipeline refuses, and is read again on its next change.
//
// The directory is not trusted. The module file is opened through the
// directory (os.Root): it may be a symlink that stays in the directory (a
// Kubernetes volume's ..data link), but one that leads out of it is
// refused, as is anything but a regular file and a file over the size cap
// (WithMaxModuleBytes). A refusal is a *CandidateError at StepSource,
// reported once per file.
//
// Every replacement is seen: the file is read again when its identity
// (device, inode, size, modification and change times) differs from the
// last read, and also while its times are too recent to tell a later write
// apart (within a window of that read: 50 ms, or 2 s on a file system that
// keeps whole seconds), since file times come from a coarse clock; a
// module is returned only when its digest changed.
type DirSource struct {
	path    string // the module's absolute path
	dir     string // the watched directory
	realDir string // dir with its symlinks resolved
	name    string // the module's name in dir
	root    *os.Root
	settle  time.Duration
	max     int64
	w       *fsnotify.Watcher
	now     func() time.Time

	// what the last Check read
	id     fileID
	readAt time.Time
	sha    string
	// the last refusal, reported once
	refusedKey string
}

var _ Source = (*DirSource)(nil)

// DirOption configures a DirSource.
type DirOption func(*DirSource)

// WithMaxModuleBytes sets the largest module file the source reads (0 or
// less: DefaultMaxModuleBytes).
func WithMaxModuleBytes(n int64) DirOption {
	return func(d *DirSource) {
		if n > 0 {
			d.max = n
		}
	}
}

// NewDirSource watches the module at path. settle is how long changes must
// have stopped before the file is read (0: DefaultSettle).
func NewDirSource(path string, settle time.Duration, opts ...DirOption) (*DirSource, error) {
	if settle <= 0 {
		settle = DefaultSettle
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d := &DirSource{path: abs, dir: filepath.Dir(abs), name: filepath.Base(abs), settle: settle, max: DefaultMaxModuleBytes, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	if d.realDir, err = filepath.EvalSymlinks(d.dir); err != nil {
		return nil, fmt.Errorf("swap: watching %s: %w", d.dir, err)
	}
	if d.root, err = os.OpenRoot(d.dir); err != nil {
		return nil, fmt.Errorf("swap: watching %s: %w", d.dir, err)
	}
	if d.w, err = fsnotify.NewWatcher(); err != nil {
		d.root.Close()
		return nil, fmt.Errorf("swap: watching %s: %w", abs, err)
	}
	if err := d.w.Add(d.dir); err != nil {
		d.w.Close()
		d.root.Close()
		return nil, fmt.Errorf("swap: watching %s: %w", d.dir, err)
	}
	return d, nil
}

// Path returns the watched module's path.
func (d *DirSource) Path() string { return d.path }

// Check implements Source: the file is read when its identity changed or
// is too recent to be trusted, and returned only when its digest changed.
// A file the directory's rules refuse (a symlink out of the directory, not
// a regular file, over the size cap) is a *CandidateError at StepSource,
// returned once until the file changes.
func (d *DirSource) Check(ctx context.Context) (*Candidate, error) {
	start := d.now()
	if d.unchanged() {
		return nil, nil
	}
	f, err := d.open()
	if errors.Is(err, fs.ErrNotExist) {
		d.refusedKey = ""
		return nil, nil
	}
	var rf *refusedFile
	if errors.As(err, &rf) {
		return d.refuse(rf)
	}
	if err != nil {
		return nil, fmt.Errorf("swap: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("swap: %w", err)
	}
	id := identity(st)
	switch {
	case !st.Mode().IsRegular():
		return d.refuse(&refusedFile{id: id, why: fmt.Sprintf("it is not a regular file (%s)", st.Mode().Type())})
	case st.Size() > d.max:
		return d.refuse(d.tooLarge(id, st.Size()))
	case d.sha != "" && id == d.id && !d.racy(id): // replaced between the stat and the open, and back
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, d.max+1))
	if err != nil {
		return nil, fmt.Errorf("swap: reading %s: %w", d.path, err)
	}
	if int64(len(b)) > d.max { // it grew while read
		return d.refuse(d.tooLarge(id, int64(len(b))))
	}
	d.refusedKey = ""
	d.id, d.readAt = id, start
	c := &Candidate{Wasm: b, Origin: d.path}
	if c.SHA256() == d.sha {
		return nil, nil
	}
	d.sha = c.SHA256()
	return c, nil
}

// unchanged reports whether the file is, from its identity alone, the one
// the last Check read (one stat through the root, no open).
func (d *DirSource) unchanged() bool {
	if d.sha == "" || d.refusedKey != "" {
		return false
	}
	st, err := d.root.Stat(d.name)
	return err == nil && st.Mode().IsRegular() && identity(st) == d.id && !d.racy(d.id)
}

// refuse returns the refusal of the file as a *CandidateError, or nothing
// when the same file was refused for the same reason at the last check.
func (d *DirSource) refuse(rf *refusedFile) (*Candidate, error) {
	key := fmt.Sprintf("%v|%s", rf.id, rf.why)
	if key == d.refusedKey {
		return nil, nil
	}
	d.refusedKey = key
	return nil, &CandidateError{Origin: d.path, Step: StepSource, Err: fmt.Errorf("%w: %s", ErrSourceRefused, rf.why)}
}

func (d *DirSource) tooLarge(id fileID, size int64) *refusedFile {
	return &refusedFile{id: id, why: fmt.Sprintf("it is %d bytes, over the limit of %d bytes: a module that large is no plugin; raise hotSwap.maxModuleBytes if it is one", size, d.max)}
}

// Wait implements Source: it returns once an event about the module's file
// has been followed by Settle without another.
func (d *DirSource) Wait(ctx context.Context) error {
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-d.w.Events:
			if !ok {
				return fmt.Errorf("swap: watcher of %s closed", d.path)
			}
			if filepath.Base(ev.Name) == d.name {
				quiet = time.After(d.settle)
			}
		case err, ok := <-d.w.Errors:
			if !ok {
				return fmt.Errorf("swap: watcher of %s closed", d.path)
			}
			// An overflow loses events: check anyway.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				quiet = time.After(d.settle)
			}
		case <-quiet:
			return nil
		}
	}
}

// Close implements Source.
func (d *DirSource) Close() error { return errors.Join(d.w.Close(), d.root.Close()) }
