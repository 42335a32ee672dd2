package extism_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/host/plugin/extism/asbuild"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// extism.Config and extism.Stats convert to and from host/plugin's, so a
// loader that knows both transports passes one Config to either.
var (
	_ = extism.Config(plugin.Config{})
	_ = plugin.Stats(extism.Stats{})
)

var (
	guestsMu sync.Mutex
	guests   = map[string][]byte{}
	cacheDir string // a compilation cache shared by the tests of one run
)

func TestMain(m *testing.M) {
	wasmcachetest.RunChild(childStart) // a child of BenchmarkColdStartProcess
	dir, err := os.MkdirTemp("", "dynafold-extism-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// here is this package's directory.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// asProject is the npm project of the AssemblyScript example, whose
// node_modules (assemblyscript, @extism/as-pdk) also builds the test guests.
func asProject() string {
	return filepath.Join(here(), "..", "..", "..", "plugins", "examples", "order-summary-as")
}

func cached(name string, build func() []byte) []byte {
	guestsMu.Lock()
	defer guestsMu.Unlock()
	if b, ok := guests[name]; ok {
		return b
	}
	b := build()
	guests[name] = b
	return b
}

// orderSummaryAS is the AssemblyScript order-summary plugin, built with its
// asconfig (-O3) as `make` builds it.
func orderSummaryAS(tb testing.TB) []byte {
	tb.Helper()
	return cached("order-summary-as", func() []byte {
		return asbuild.Build(tb, asProject(), asbuild.Module{
			Entry: "assembly/index.ts", SourceDir: filepath.Join(asProject(), "assembly"),
			Args: []string{"--config", "asconfig.json", "--target", "release"},
		})
	})
}

// orderSummaryRaw is the Go order-summary plugin (the raw ABI).
func orderSummaryRaw(tb testing.TB) []byte {
	tb.Helper()
	return cached("order-summary", func() []byte {
		return wasmbuild.Build(tb, filepath.Join(here(), "..", "..", "..", "plugins", "examples", "order-summary", "wasm"))
	})
}

// testGuest builds an AssemblyScript test guest of testdata/<name>.
func testGuest(tb testing.TB, name string) []byte {
	tb.Helper()
	return cached("test-"+name, func() []byte {
		td := filepath.Join(here(), "testdata")
		return asbuild.Build(tb, asProject(), asbuild.Module{
			Entry: filepath.Join(td, name, "index.ts"), SourceDir: td,
			Args: []string{"--config", filepath.Join(td, "asconfig.json"), "--target", "release"},
		})
	})
}

// nativeOrderSummary is the Go projection as in-process logic.
func nativeOrderSummary() logic.Logic {
	return logic.Native(guest.MustNew(ordersummary.Projection), "order-summary")
}

// load loads an Extism module and closes it at the end of the test.
func load(tb testing.TB, wasm []byte, cfg extism.Config) *extism.Plugin {
	tb.Helper()
	ctx := context.Background()
	if cfg.CacheDir == "" {
		cfg.CacheDir = cacheDir
	}
	p, err := extism.Load(ctx, wasm, cfg)
	if err != nil {
		tb.Fatalf("load: %v", err)
	}
	tb.Cleanup(func() {
		if err := p.Close(ctx); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return p
}

// orderRun is k events of order o-1: OrderPlaced, then ItemAdded.
func orderRun(k int) *abi.EvolveRequest {
	req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1"}
	for v := 1; v <= k; v++ {
		e := abi.Event{Stream: "Order", StreamID: "o-1", Version: uint64(v), Timestamp: "2026-01-01T00:00:00Z"}
		if v == 1 {
			e.Type = "OrderPlaced"
			e.Data = abi.Item{"_tag": abi.S(e.Type), "customer": abi.S("c-42")}
		} else {
			e.Type = "ItemAdded"
			e.Data = abi.Item{"_tag": abi.S(e.Type), "sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N("12.5")}
		}
		req.Events = append(req.Events, abi.SourcedEvent{Source: "Order", Event: e})
	}
	return req
}

// wantCallError checks that err is a *logic.CallError for plugin and function
// whose cause matches kind and whose text contains every fragment.
func wantCallError(t *testing.T, err error, pluginName, function string, kind error, fragments ...string) {
	t.Helper()
	t.Logf("error: %v", err)
	var ce *logic.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *logic.CallError", err, err)
	}
	if ce.Plugin != pluginName || ce.Function != function {
		t.Errorf("CallError names plugin %q function %q, want %q %q", ce.Plugin, ce.Function, pluginName, function)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q does not match %v", err, kind)
	}
	text := err.Error()
	for _, f := range append([]string{"plugin " + pluginName + ": " + function + ": "}, fragments...) {
		if !strings.Contains(text, f) {
			t.Errorf("error %q lacks %q", text, f)
		}
	}
}
