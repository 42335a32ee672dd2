package swap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

var (
	modsMu   sync.Mutex
	mods     = map[string][]byte{}
	cacheDir string // a compilation cache shared by the tests of one run
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dynafold-swap-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The test modules: v1 is the order-summary example, the others are in
// testdata.
const (
	v1          = "v1"          // order-summary@1.0.0, no self_test
	v2          = "v2"          // order-summary@2.0.0, rows carry model = 2, passing self_test
	v2trap      = "v2trap"      // order-summary@2.0.0 whose self_test traps
	wrongStream = "wrongstream" // reads stream Invoice instead of Order
	badABI      = "badabi"      // declares ABI 2.0
)

// module builds (once per process, cached across runs) a test module.
func module(t testing.TB, name string) []byte {
	t.Helper()
	modsMu.Lock()
	defer modsMu.Unlock()
	if b, ok := mods[name]; ok {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "testdata", name)
	if name == v1 {
		dir = filepath.Join(filepath.Dir(file), "..", "..", "plugins", "examples", "order-summary", "wasm")
	}
	b := wasmbuild.Build(t, dir)
	mods[name] = b
	return b
}

func candidate(t testing.TB, name string) swap.Candidate {
	return swap.Candidate{Wasm: module(t, name), Origin: "test:" + name}
}

func pluginConfig() plugin.Config {
	return plugin.Config{CacheDir: cacheDir, PoolSize: 4}
}

// newSwapper serves v1 (or first) and is closed at the end of the test.
func newSwapper(t testing.TB, first string, cfg swap.Config) *swap.Swapper {
	t.Helper()
	if cfg.Plugin.CacheDir == "" {
		cfg.Plugin = pluginConfig()
	}
	s, err := swap.New(context.Background(), candidate(t, first), cfg)
	if err != nil {
		t.Fatalf("swap.New(%s): %v", first, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// orderRun is order o's events 1..k: OrderPlaced, then ItemAdded.
func orderRun(o string, from, to int) []abi.Event {
	var evs []abi.Event
	for v := from; v <= to; v++ {
		e := abi.Event{Stream: "Order", StreamID: o, Version: uint64(v), Timestamp: "2026-01-01T00:00:00Z"}
		if v == 1 {
			e.Type = "OrderPlaced"
			e.Data = abi.Item{"_tag": abi.S(e.Type), "customer": abi.S("c-42")}
		} else {
			e.Type = "ItemAdded"
			e.Data = abi.Item{"_tag": abi.S(e.Type), "sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N("2.5")}
		}
		evs = append(evs, e)
	}
	return evs
}

func evolveReq(o string, k int) *abi.EvolveRequest {
	req := &abi.EvolveRequest{Key: ordersummary.RowKey(o), StreamID: o}
	for _, e := range orderRun(o, 1, k) {
		req.Events = append(req.Events, abi.SourcedEvent{Source: "Order", Event: e})
	}
	return req
}

// model returns the row's model attribute: "2" for rows of v2, "" for v1.
func model(it abi.Item) string { return it["model"].Str }

// waitFor polls cond for up to 60 s (compiling a module under -race is slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
