package quarantine

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// File is a Destination appending one JSON line per entry to a file, synced
// before Send returns.
type File struct {
	path string
	mu   sync.Mutex
}

// NewFile returns a destination appending to path (created when absent).
func NewFile(path string) *File { return &File{path: path} }

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
	fh, err := os.OpenFile(f.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("quarantine file: %w; check the path and its directory's permissions", err)
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
