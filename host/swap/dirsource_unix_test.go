//go:build unix

package swap_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dynafold/dynafold/host/swap"
)

// TestW6_DirSourceRefusesANamedPipe: a named pipe put where the module
// was is refused as not a regular file, without blocking on it (a read
// would wait for a writer forever).
func TestW6_DirSourceRefusesANamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "orders.wasm")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	src := dirSource(t, path)
	_, err := src.Check(context.Background())
	if !errors.Is(err, swap.ErrSourceRefused) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a named pipe: %v; want it refused as not a regular file", err)
	}
}
