package transport_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/host/plugin/extism/asbuild"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// TestW3_LoadPicksTheTransport loads the Go plugin and the AssemblyScript
// plugin through one call: each gets its transport, both answer the same.
func TestW3_LoadPicksTheTransport(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	raw := wasmbuild.BuildPath(t, filepath.Join(root(), "plugins", "examples", "order-summary", "wasm"))
	proj := filepath.Join(root(), "plugins", "examples", "order-summary-as")
	asWasm := asbuild.Build(t, proj, asbuild.Module{Entry: "assembly/index.ts", SourceDir: filepath.Join(proj, "assembly"),
		Args: []string{"--config", "asconfig.json", "--target", "release"}})
	asPath := filepath.Join(t.TempDir(), "order-summary-as.wasm")
	if err := os.WriteFile(asPath, asWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1", Events: []abi.SourcedEvent{{Source: "Order", Event: abi.Event{
		Stream: "Order", StreamID: "o-1", Version: 1, Type: "ItemAdded",
		Data: abi.Item{"_tag": abi.S("ItemAdded"), "price": abi.N("2.5")}, Timestamp: "2026-01-01T00:00:00Z"}}}}
	var totals []string
	for _, tc := range []struct {
		path string
		want extism.Transport
	}{{raw, extism.TransportRaw}, {asPath, extism.TransportExtism}} {
		p, tr, err := transport.LoadFile(ctx, tc.path, plugin.Config{CacheDir: cache, PoolSize: 2})
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if tr != tc.want {
			t.Errorf("%s: transport %v, want %v", tc.path, tr, tc.want)
		}
		resp, err := p.Evolve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		totals = append(totals, resp.State["total"].Str)
		st, err := transport.Stats(p)
		if err != nil || st.Calls != 1 {
			t.Errorf("%v stats %+v, %v", tr, st, err)
		}
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if totals[0] != "2.5" || totals[1] != "2.5" {
		t.Errorf("totals %v", totals)
	}
	if err := transport.Precompile(ctx, asWasm, plugin.Config{CacheDir: t.TempDir()}); err != nil {
		t.Errorf("Precompile: %v", err)
	}
	if _, _, err := transport.Load(ctx, []byte("\x00asm\x01\x00\x00\x00"), plugin.Config{}); !errors.Is(err, extism.ErrUnknownTransport) {
		t.Errorf("an empty module: %v, want ErrUnknownTransport", err)
	}
}
