//go:build unix

package privfile_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dynafold/dynafold/internal/privfile"
)

// TestW6_PrivateFilesAreCreatedAndTightenedTo0600: a new file is 0600
// under umask 022; an existing 0644 file is tightened, its content kept
// by OpenAppend, and the change is reported once.
func TestW6_PrivateFilesAreCreatedAndTightenedTo0600(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	for _, open := range []struct {
		name string
		fn   func(string) (*os.File, *privfile.Loosened, error)
		keep bool
	}{{"OpenAppend", privfile.OpenAppend, true}, {"Create", privfile.Create, false}} {
		fresh := filepath.Join(dir, open.name+"-new")
		f, lo, err := open.fn(fresh)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if lo != nil {
			t.Errorf("%s of a new file reports it loosened: %+v", open.name, lo)
		}
		if st, _ := os.Stat(fresh); st.Mode().Perm() != privfile.Mode {
			t.Errorf("%s created %s with mode %v, want %v", open.name, fresh, st.Mode().Perm(), privfile.Mode)
		}

		loose := filepath.Join(dir, open.name+"-old")
		if err := os.WriteFile(loose, []byte("line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, lo, err = open.fn(loose)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if lo == nil || lo.Was != 0o644 || lo.Err != nil {
			t.Errorf("%s of a 0644 file: loosened %+v, want Was 0644 and no error", open.name, lo)
		}
		var log bytes.Buffer
		lo.Log(slog.New(slog.NewTextHandler(&log, nil)))
		if !strings.Contains(log.String(), "now 0600") || !strings.Contains(log.String(), "was=0644") {
			t.Errorf("the log of the tightening says %q", log.String())
		}
		if st, _ := os.Stat(loose); st.Mode().Perm() != privfile.Mode {
			t.Errorf("%s left %s with mode %v, want %v", open.name, loose, st.Mode().Perm(), privfile.Mode)
		}
		if b, _ := os.ReadFile(loose); (string(b) == "line\n") != open.keep {
			t.Errorf("%s: the file holds %q afterwards", open.name, b)
		}
		f, lo, err = open.fn(loose)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if lo != nil {
			t.Errorf("%s of a file already 0600 reports it loosened: %+v", open.name, lo)
		}
	}
}
