package swap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultSettle is how long a DirSource waits for a file to stop changing
// before it reads it.
const DefaultSettle = 100 * time.Millisecond

// DirSource is a plugin module in a local directory, watched with fsnotify
// (the directory, not the file, so a module renamed into place is seen).
// Replace the file by writing a temporary file in the same directory and
// renaming it: a module written in place may be read half-written, which
// the pipeline refuses, and is read again on its next change.
type DirSource struct {
	path   string
	settle time.Duration
	w      *fsnotify.Watcher
	// what the last Check saw
	size  int64
	mtime time.Time
	sha   string
}

var _ Source = (*DirSource)(nil)

// NewDirSource watches the module at path. settle is how long changes must
// have stopped before the file is read (0: DefaultSettle).
func NewDirSource(path string, settle time.Duration) (*DirSource, error) {
	if settle <= 0 {
		settle = DefaultSettle
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("swap: watching %s: %w", abs, err)
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, fmt.Errorf("swap: watching %s: %w", filepath.Dir(abs), err)
	}
	return &DirSource{path: abs, settle: settle, w: w}, nil
}

// Path returns the watched module's path.
func (d *DirSource) Path() string { return d.path }

// Check implements Source: the file is read only when its size or
// modification time changed, and returned only when its digest did.
func (d *DirSource) Check(ctx context.Context) (*Candidate, error) {
	st, err := os.Stat(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("swap: %w", err)
	}
	if d.sha != "" && st.Size() == d.size && st.ModTime().Equal(d.mtime) {
		return nil, nil
	}
	b, err := os.ReadFile(d.path)
	if err != nil {
		return nil, fmt.Errorf("swap: %w", err)
	}
	c := &Candidate{Wasm: b, Origin: d.path}
	d.size, d.mtime = st.Size(), st.ModTime()
	if c.SHA256() == d.sha {
		return nil, nil
	}
	d.sha = c.SHA256()
	return c, nil
}

// Wait implements Source: it returns once an event about the module's file
// has been followed by Settle without another.
func (d *DirSource) Wait(ctx context.Context) error {
	name := filepath.Base(d.path)
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-d.w.Events:
			if !ok {
				return fmt.Errorf("swap: watcher of %s closed", d.path)
			}
			if filepath.Base(ev.Name) == name {
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
func (d *DirSource) Close() error { return d.w.Close() }
