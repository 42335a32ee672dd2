//go:build !wasip1

package examples_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// here is this package's directory.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// The order-summary plugin in each language, as `make plugins` builds it:
// "go" (the Go SDK), "rust" (sdk-guest/rust) and "c" (sdk-guest/c). The
// Rust and C ones skip the test, naming the packages to install, on a
// machine without their toolchains.
var orderSummaryLangs = []string{"go", "rust", "c"}

var (
	orderMu   sync.Mutex
	orderWasm = map[string]string{}
)

// orderSummaryPath returns the path of the order-summary module of lang.
func orderSummaryPath(tb testing.TB, lang string) string {
	tb.Helper()
	orderMu.Lock()
	defer orderMu.Unlock()
	if p, ok := orderWasm[lang]; ok {
		return p
	}
	var p string
	switch lang {
	case "go":
		p = wasmbuild.BuildPath(tb, filepath.Join(here(), "order-summary", "wasm"))
	case "rust":
		p = wasmbuild.BuildRustPath(tb, filepath.Join(here(), "order-summary-rs"))
	case "c":
		p = wasmbuild.BuildCPath(tb, []string{filepath.Join(here(), "order-summary-c", "order_summary.c")})
	default:
		tb.Fatalf("no order-summary in %s", lang)
	}
	orderWasm[lang] = p
	return p
}

// loadOrderSummary loads the order-summary module of lang, closed at the
// end of the test.
func loadOrderSummary(tb testing.TB, lang string) *plugin.Plugin {
	tb.Helper()
	ctx := context.Background()
	p, err := plugin.LoadFile(ctx, orderSummaryPath(tb, lang), plugin.Config{})
	if err != nil {
		tb.Fatalf("load the %s order-summary: %v", lang, err)
	}
	tb.Cleanup(func() { _ = p.Close(ctx) })
	return p
}
