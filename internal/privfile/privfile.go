// Package privfile opens the files the host writes records to (the
// quarantine file, the change-feed reader's state file, captured batches)
// so that only their owner can read them: they hold whole record images.
//
// A new file is created with Mode. An existing file whose mode lets its
// group or others in (one written by an earlier version, which created
// them 0644) is tightened to Mode through the open descriptor; the caller
// is told, so it can log what changed. A file that cannot be tightened (it
// belongs to another user) is opened all the same, so nothing is lost, and
// the caller is told why it stays open to others.
package privfile

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// Mode is the permission of a file holding records: its owner reads and
// writes it, nobody else.
const Mode fs.FileMode = 0o600

// Loosened is an existing file whose mode let its group or others in.
type Loosened struct {
	Path string      // the file
	Was  fs.FileMode // its permission bits when opened
	Err  error       // why it could not be tightened; nil: it is Mode now
}

// Log reports l on log: a warning that the file was tightened, or an error
// that it could not be and how to fix it. A nil Loosened logs nothing.
func (l *Loosened) Log(log *slog.Logger) {
	if l == nil || log == nil {
		return
	}
	if l.Err == nil {
		log.Warn("a file holding records was open to other users; its mode is now 0600",
			"file", l.Path, "was", fmt.Sprintf("%#o", uint32(l.Was)))
		return
	}
	log.Error("a file holding records is open to other users and its mode could not be changed; run chmod 600 on it as its owner",
		"file", l.Path, "mode", fmt.Sprintf("%#o", uint32(l.Was)), "err", l.Err.Error())
}

// OpenAppend opens path for appending, creating it with Mode when absent.
// An existing file open to group or others is tightened to Mode; the
// *Loosened (nil when the file was private already) says so.
func OpenAppend(path string) (*os.File, *Loosened, error) {
	return open(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY)
}

// Create creates path with Mode, or truncates it when it exists; an
// existing file open to group or others is tightened as by OpenAppend.
func Create(path string) (*os.File, *Loosened, error) {
	return open(path, os.O_TRUNC|os.O_CREATE|os.O_WRONLY)
}

func open(path string, flag int) (*os.File, *Loosened, error) {
	f, err := os.OpenFile(path, flag, Mode)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 == 0 {
		return f, nil, nil
	}
	return f, &Loosened{Path: path, Was: st.Mode().Perm(), Err: f.Chmod(Mode)}, nil
}
