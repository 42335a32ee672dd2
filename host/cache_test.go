package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestW5_HostHonoursCacheReadOnly loads the order-summary plugin through a
// configuration whose plugins.cacheDir is an empty, writable directory:
// with plugins.cacheReadOnly the host leaves it empty (the plugin compiles
// in memory); without, the same host fills it.
func TestW5_HostHonoursCacheReadOnly(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	wasm := wasmbuild.Build(t, filepath.Join("..", "plugins", "examples", "order-summary", "wasm"))
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("cacheReadOnly=%v", readOnly), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "orders.wasm"), wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(dir, "cache")
			if err := os.Mkdir(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			cfgPath := filepath.Join(dir, "dynafold.json")
			if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": "cache", "cacheReadOnly": %v},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"}}]
}`, env.Table(t, "events", true), readOnly, env.Table(t, "rows", false))), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := host.LoadConfig(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			h, err := host.New(ctx, cfg, host.WithClient(env.Client))
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(cache)
			if err != nil {
				t.Fatal(err)
			}
			if readOnly && len(entries) != 0 {
				t.Errorf("the read-only cache holds %d entries, want none", len(entries))
			}
			if !readOnly && len(entries) == 0 {
				t.Errorf("the writable cache is empty")
			}
		})
	}
}
