package plugin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// orderSummaryWasm builds the order-summary example plugin (once per
// process, so the benchmarks all measure the same module).
func orderSummaryWasm(t testing.TB) []byte {
	guestsMu.Lock()
	defer guestsMu.Unlock()
	if b, ok := guests["order-summary"]; ok {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	b := wasmbuild.Build(t, filepath.Join(filepath.Dir(file), "..", "..", "plugins", "examples", "order-summary", "wasm"))
	guests["order-summary"] = b
	return b
}

// nativeOrderSummary is the same projection as in-process logic.
func nativeOrderSummary() logic.Logic {
	return logic.Native(guest.MustNew(ordersummary.Projection), "order-summary")
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

// TestW1_ExamplePluginAgreesWithNative folds the same runs through the
// order-summary plugin as Wasm and natively: the responses are equal.
func TestW1_ExamplePluginAgreesWithNative(t *testing.T) {
	ctx := context.Background()
	p, err := plugin.Load(ctx, orderSummaryWasm(t), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	native := nativeOrderSummary()
	if got, want := p.Describe(), native.Describe(); got.Name != want.Name || got.Version != want.Version || len(got.Capabilities) != len(want.Capabilities) {
		t.Errorf("describe: wasm %+v, native %+v", got, want)
	}
	for _, k := range []int{1, 2, 10, 100} {
		req := orderRun(k)
		w, err := p.Evolve(ctx, req)
		if err != nil {
			t.Fatalf("k=%d wasm: %v", k, err)
		}
		n, err := native.Evolve(ctx, req)
		if err != nil {
			t.Fatalf("k=%d native: %v", k, err)
		}
		if a, b := abi.AppendEvolveResponse(nil, w), abi.AppendEvolveResponse(nil, n); string(a) != string(b) {
			t.Errorf("k=%d: wasm and native differ:\nwasm   %+v\nnative %+v", k, w, n)
		}
		if got := w.State["items"]; got.Str != fmt.Sprint(k-1) {
			t.Errorf("k=%d: items = %+v", k, got)
		}
	}
	keys, err := p.Key(ctx, &abi.KeyRequest{Source: "Order", Events: []abi.Event{orderRun(1).Events[0].Event}})
	if err != nil || len(keys.Keys) != 1 || !abi.ItemsEqual(keys.Keys[0].Key, ordersummary.RowKey("o-1")) {
		t.Errorf("key: %+v, %v", keys, err)
	}
}
