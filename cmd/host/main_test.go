package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache"
)

// testCacheDir is the compilation cache the commands run by this package's
// tests share when their configuration names none (TestMain): each Go
// guest module compiles once per test process instead of at every command.
// Its key is the file a cache directory keeps, so a configuration (or a
// host binary the tests start) may name the directory too.
var testCacheDir string

// testBinDir holds the host binary the tests build once (hostBinary).
var testBinDir string

func TestMain(m *testing.M) {
	dir, keyFile, remove, err := wasmcache.NewTestCache()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test compilation cache:", err)
		os.Exit(2)
	}
	testCacheDir = dir
	undo := wasmcache.SetFallbackForTests(dir, keyFile)
	bin, err := os.MkdirTemp("", "dynafold-host-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testBinDir = bin
	code := m.Run()
	undo()
	remove()
	os.RemoveAll(bin)
	os.Exit(code)
}

var hostBuild struct {
	once sync.Once
	path string
	err  error
}

// hostBinary returns the host binary built from this package, once per
// test process: the tests that run it as a process share it.
func hostBinary(t *testing.T) string {
	t.Helper()
	hostBuild.once.Do(func() {
		path := filepath.Join(testBinDir, "host")
		if out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput(); err != nil {
			hostBuild.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		hostBuild.path = path
	})
	if hostBuild.err != nil {
		t.Fatal(hostBuild.err)
	}
	return hostBuild.path
}
