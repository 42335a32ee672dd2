package plugin_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

var (
	guestsMu sync.Mutex
	guests   = map[string][]byte{}
	cacheDir string // a compilation cache shared by the tests of one run
	// goldenRoot holds the caches precompiled once per run (precompiled).
	goldenRoot string
)

func TestMain(m *testing.M) {
	wasmcachetest.RunChild(childStart) // a child of BenchmarkColdStartProcess
	dir, err := os.MkdirTemp("", "dynafold-plugin-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	if goldenRoot, err = os.MkdirTemp("", "dynafold-plugin-test-precompiled-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(goldenRoot)
	os.Exit(code)
}

// testGuest builds (once per process, cached across runs) a test guest of testdata.
func testGuest(t testing.TB, name string) []byte {
	t.Helper()
	guestsMu.Lock()
	defer guestsMu.Unlock()
	if b, ok := guests[name]; ok {
		return b
	}
	b := wasmbuild.Build(t, "testdata/"+name)
	guests[name] = b
	return b
}

// loadGuest loads a test guest and closes it at the end of the test.
func loadGuest(t testing.TB, name string, cfg plugin.Config) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	if cfg.CacheDir == "" {
		cfg.CacheDir = cacheDir
	}
	p, err := plugin.Load(ctx, testGuest(t, name), cfg)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := p.Close(ctx); err != nil {
			t.Errorf("close %s: %v", name, err)
		}
	})
	return p
}

// evolveReq is a run of events of one Order stream, one per type.
func evolveReq(types ...string) *abi.EvolveRequest {
	req := &abi.EvolveRequest{Key: abi.Item{"pk": abi.S("o-1")}, StreamID: "o-1"}
	for i, typ := range types {
		req.Events = append(req.Events, abi.SourcedEvent{Source: "Order", Event: abi.Event{
			Stream: "Order", StreamID: "o-1", Version: uint64(i + 1), Type: typ,
			Data:      abi.Item{"_tag": abi.S(typ)},
			Timestamp: "2026-01-01T00:00:00Z",
		}})
	}
	return req
}

// mustServe checks that p still folds a normal event.
func mustServe(t *testing.T, p *plugin.Plugin) {
	t.Helper()
	resp, err := p.Evolve(context.Background(), evolveReq("Placed", "Placed"))
	if err != nil {
		t.Fatalf("plugin stopped serving: %v", err)
	}
	if got := resp.State["count"].Str; got != "2" {
		t.Fatalf("count = %q, want 2", got)
	}
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

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
