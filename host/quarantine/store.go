package quarantine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dynafold/dynafold/internal/privfile"
)

// Store is where given-up records are kept for an operator: listed, read
// and, once replayed, deleted. A Table is one; so is a FileStore over the
// file a File destination appends to.
type Store interface {
	Name() string
	All(ctx context.Context) ([]Entry, error)
	Get(ctx context.Context, id string) (Entry, error)
	Delete(ctx context.Context, id string) error
}

var (
	_ Store = (*Table)(nil)
	_ Store = (*FileStore)(nil)
)

// ReplayedSuffix names the file beside a quarantine file that lists the
// entries replayed: FileStore.Delete appends an id there, and the entry is
// no longer listed. The quarantine file itself is only ever appended to,
// by the readers that give records up, so nothing they write can be lost
// to a rewrite.
const ReplayedSuffix = ".replayed"

// FileStore is the Store of a quarantine file (File, a sidecar's onFailure
// {"file": PATH}).
type FileStore struct{ path string }

// OpenFile returns the Store of the quarantine file at path; an error
// when it cannot be read (none exists until a record is given up).
func OpenFile(path string) (*FileStore, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("quarantine file %s does not exist: no record has been given up there yet (a reader creates it with the first), or the path differs from onFailure.file as the reader resolves it (relative to its working directory)", path)
		}
		return nil, fmt.Errorf("quarantine file: %w", err)
	}
	return &FileStore{path: path}, nil
}

// Name returns the file's path.
func (s *FileStore) Name() string { return s.path }

// All returns the file's entries that were not replayed, in the order they
// were given up.
func (s *FileStore) All(ctx context.Context) ([]Entry, error) {
	entries, err := ReadFile(s.path)
	if err != nil {
		return nil, err
	}
	done, err := s.replayed()
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if !done[e.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// Get returns the entry id; ErrNotFound when the file has none that was
// not replayed.
func (s *FileStore) Get(ctx context.Context, id string) (Entry, error) {
	entries, err := s.All(ctx)
	if err != nil {
		return Entry{}, err
	}
	for _, e := range entries {
		if e.ID == id {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("%w %q in %s: `host quarantine list --file %s` shows the ids", ErrNotFound, id, s.path, s.path)
}

// Delete marks the entry id replayed (in the file beside, ReplayedSuffix);
// ErrNotFound when the file has no such entry left.
func (s *FileStore) Delete(ctx context.Context, id string) error {
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	fh, loose, err := privfile.OpenAppend(s.path + ReplayedSuffix)
	if err != nil {
		return fmt.Errorf("quarantine file %s: marking %s replayed: %w", s.path, id, err)
	}
	_ = loose // the ids are no secret; the file stays as its owner made it
	_, err = fh.WriteString(id + "\n")
	if err = errors.Join(err, fh.Sync(), fh.Close()); err != nil {
		return fmt.Errorf("quarantine file %s: marking %s replayed: %w", s.path, id, err)
	}
	return nil
}

// replayed reads the ids marked replayed.
func (s *FileStore) replayed() (map[string]bool, error) {
	fh, err := os.Open(s.path + ReplayedSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("quarantine file %s: %w", s.path, err)
	}
	defer fh.Close()
	done := map[string]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			done[id] = true
		}
	}
	return done, sc.Err()
}
