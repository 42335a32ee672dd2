package quarantine

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/dynafold/dynafold/internal/privfile"
)

// File is a Destination appending one JSON line per entry to a file, synced
// before Send returns. The entries hold whole record images, so the file
// is created readable by its owner only (0600), and a file open to other
// users (one an earlier version created 0644) is made 0600 at the first
// entry, with a warning.
type File struct {
	path   string
	log    *slog.Logger
	mu     sync.Mutex
	warned bool // a file that stays open to others is reported once
}

// NewFile returns a destination appending to path (created when absent).
func NewFile(path string) *File { return &File{path: path, log: slog.Default()} }

// WithLogger sets where File reports a file whose mode it tightened or could
// not tighten (default slog.Default()) and returns f.
func (f *File) WithLogger(l *slog.Logger) *File {
	if l != nil {
		f.log = l
	}
	return f
}

// Send appends e as one JSON line and syncs the file.
func (f *File) Send(_ context.Context, e Entry) error {
	if e.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		e.ID = hex.EncodeToString(b[:])
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("quarantine file %s: encoding the entry: %w", f.path, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, loose, err := privfile.OpenAppend(f.path)
	if err != nil {
		return fmt.Errorf("quarantine file: %w; check the path and its directory's permissions", err)
	}
	if loose != nil && (loose.Err == nil || !f.warned) {
		loose.Log(f.log)
		f.warned = true
	}
	_, err = fh.Write(append(line, '\n'))
	err = errors.Join(err, fh.Sync(), fh.Close())
	if err != nil {
		return fmt.Errorf("quarantine file %s: %w", f.path, err)
	}
	return nil
}

// ReadFile reads the entries of a file written by File.
func ReadFile(path string) ([]Entry, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []Entry
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("quarantine file %s: line %d: %w", path, len(out)+1, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
