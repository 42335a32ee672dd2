package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestH3_HostServesAHotSwappedPlugin runs a host whose projection's logic
// is a hot-swappable plugin watched in a directory: a row written before the
// new module is renamed into place records 1.0.0, a row written after it
// records 2.0.0 and carries 2.0.0's model attribute (SPEC H3, Y3).
func TestH3_HostServesAHotSwappedPlugin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "rows", false)
	dir, v2 := swapModules(t)
	cfgPath := filepath.Join(dir, "dynafold.json")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": "cache"},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"},
                   "writtenBy": "writtenBy", "hotSwap": {"watch": true, "settle": "10ms"}}]
}`, events, rows)), 0o644); err != nil {
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
	defer h.Close(context.Background())
	watched := make(chan error, 1)
	go func() { watched <- h.Watch(ctx) }()

	write := func(id string) abi.Item { return writeOrder(ctx, t, h, env, rows, id) }
	if it := write("o-1"); it["writtenBy"].Str != "order-summary@1.0.0" || it["model"].Str != "" {
		t.Fatalf("before the swap: %v", it)
	}
	replaceModule(t, dir, v2)
	deadline := time.Now().Add(2 * time.Minute) // compiling under -race takes tens of seconds
	for {
		if _, v, err := h.PluginVersion("summaries"); err != nil || v == "2.0.0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("v2 not swapped in")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if it := write("o-2"); it["writtenBy"].Str != "order-summary@2.0.0" || it["model"].Str != "2" {
		t.Fatalf("after the swap: %v", it)
	}
	cancel()
	if err := <-watched; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

// TestH3_ConfiguredHotSwapFollowsAWatchedFile configures hot swap in the
// configuration file (projections[].hotSwap): the host serves the module,
// Host.Watch follows its file, and rows record the version that wrote them.
func TestH3_ConfiguredHotSwapFollowsAWatchedFile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "rows", false)
	dir, v2 := swapModules(t)
	cfgPath := filepath.Join(dir, "dynafold.json")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": "cache"},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"},
    "writtenBy": "writtenBy", "hotSwap": {"watch": true, "settle": "10ms"}}]
}`, events, rows)), 0o644); err != nil {
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
	defer h.Close(context.Background())
	watched := make(chan error, 1)
	go func() { watched <- h.Watch(ctx) }()

	write := func(id string) abi.Item { return writeOrder(ctx, t, h, env, rows, id) }
	if it := write("o-1"); it["writtenBy"].Str != "order-summary@1.0.0" || it["model"].Str != "" {
		t.Fatalf("before the swap: %v", it)
	}
	replaceModule(t, dir, v2)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if it := write(fmt.Sprint("o-", time.Now().UnixNano())); it["writtenBy"].Str == "order-summary@2.0.0" {
			if it["model"].Str != "2" {
				t.Fatalf("a row written by 2.0.0 lacks its behaviour: %v", it)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("v2 was never swapped in")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-watched; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

// swapModules returns order-summary 1.0.0 and the test's 2.0.0, and a
// directory holding 1.0.0 as orders.wasm.
func swapModules(t *testing.T) (dir string, v2 []byte) {
	t.Helper()
	v1, err := os.ReadFile(wasmbuild.BuildPath(t, "../plugins/examples/order-summary/wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if v2, err = os.ReadFile(wasmbuild.BuildPath(t, "swap/testdata/v2")); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orders.wasm"), v1, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, v2
}

// replaceModule renames wasm into place as dir/orders.wasm, as a deployment would.
func replaceModule(t *testing.T, dir string, wasm []byte) {
	t.Helper()
	tmp := filepath.Join(dir, ".orders.wasm.tmp")
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "orders.wasm")); err != nil {
		t.Fatal(err)
	}
}

// writeOrder appends an OrderPlaced to a new order, applies it and returns its row.
func writeOrder(ctx context.Context, t *testing.T, h *host.Host, env *testenv.Env, rows, id string) abi.Item {
	t.Helper()
	evs, err := h.Append(ctx, "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.ApplyEvents(ctx, "summaries", evs[0])
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Err != nil {
		t.Fatalf("apply %s: %+v", id, res.Rows)
	}
	it := env.Get(t, rows, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
	if it == nil {
		t.Fatalf("row %s not written", id)
	}
	return it
}
