package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// testBinDir holds the binaries the tests build once per test process
// (builtOnce): the bootstrap and the emulator.
var testBinDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dynafold-lambda-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testBinDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// errSkip is a build failure that skips the tests needing its binary
// rather than failing them.
type errSkip struct{ err error }

func (e errSkip) Error() string { return e.err.Error() }

var built struct {
	mu   sync.Mutex
	path map[string]string
	err  map[string]error
}

// builtOnce returns the binary name, built by build into its own directory
// under testBinDir on the first call of the process; later calls get the
// same path, or the same error. The build's errSkip goes to skip (when
// given) and any other error fails t.
func builtOnce(t testing.TB, name string, build func(dir string) (string, error), skip ...*error) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.path == nil {
		built.path, built.err = map[string]string{}, map[string]error{}
	}
	p, seen := built.path[name]
	err := built.err[name]
	if !seen {
		dir, derr := os.MkdirTemp(testBinDir, name+"-")
		if derr != nil {
			t.Fatal(derr)
		}
		p, err = build(dir)
		built.path[name], built.err[name] = p, err
	}
	var es errSkip
	if errors.As(err, &es) && len(skip) > 0 {
		*skip[0] = es.err
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}
