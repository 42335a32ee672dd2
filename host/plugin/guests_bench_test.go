package plugin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// examplesDir is plugins/examples of this checkout.
func examplesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "plugins", "examples")
}

// langOrderSummary builds the order-summary example in Rust or C (once
// per process) and returns its bytes; nil, logging one line naming the
// packages to install, when the toolchain is missing, so that a benchmark
// measures the other implementations.
func langOrderSummary(b *testing.B, lang string) []byte {
	b.Helper()
	guestsMu.Lock()
	defer guestsMu.Unlock()
	if w, ok := guests["order-summary-"+lang]; ok {
		return w
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var path string
	var err error
	if lang == "rust" {
		path, err = wasmbuild.BuildRustFile(ctx, filepath.Join(examplesDir(), "order-summary-rs"))
	} else {
		path, err = wasmbuild.BuildCFile(ctx, []string{filepath.Join(examplesDir(), "order-summary-c", "order_summary.c")})
	}
	if errors.Is(err, wasmbuild.ErrNoRust) || errors.Is(err, wasmbuild.ErrNoC) {
		b.Logf("no %s order-summary: %v", lang, err)
		return nil
	}
	if err != nil {
		b.Fatal(err)
	}
	w, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	guests["order-summary-"+lang] = w
	return w
}

// warmUp folds each benchmark request many times before any timer starts,
// then collects the garbage, so that no sub-benchmark pays for what came
// before it: an implementation's first calls (a new instance's memory
// growing and being touched, a Go guest's heap reaching its steady size)
// and the garbage of loading and compiling the modules, which the first
// timed sub-benchmark otherwise collects. A figure is then the same
// whichever sub-benchmark runs first.
func warmUp(b *testing.B, l logic.Logic, ks ...int) {
	b.Helper()
	ctx := context.Background()
	for _, k := range ks {
		req := orderRun(k)
		req.OmitState = true
		for i := 0; i < 20000/k+50; i++ {
			if _, err := l.Evolve(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	}
	runtime.GC()
}
