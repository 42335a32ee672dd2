package plugin_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
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
	p := loadOrderSummary(t)
	native := nativeOrderSummary()
	if got, want := p.Describe(), native.Describe(); got.Name != want.Name || got.Version != want.Version || len(got.Capabilities) != len(want.Capabilities) {
		t.Errorf("describe: wasm %+v, native %+v", got, want)
	}
	for _, k := range []int{1, 2, 10, 100} {
		w := sameAsNative(t, p, native, orderRun(k), fmt.Sprintf("k=%d", k))
		if got := w.State["items"]; got.Str != fmt.Sprint(k-1) {
			t.Errorf("k=%d: items = %+v", k, got)
		}
	}
	keys, err := p.Key(ctx, &abi.KeyRequest{Source: "Order", Events: []abi.Event{orderRun(1).Events[0].Event}})
	if err != nil || len(keys.Keys) != 1 || !abi.ItemsEqual(keys.Keys[0].Key, ordersummary.RowKey("o-1")) {
		t.Errorf("key: %+v, %v", keys, err)
	}
}

// TestW1_OmitStateSendsOnlyWhetherTheRowExists: with the request's
// OmitState (ABI 1.1, what the engine sends) the plugin answers a present
// state as an empty item and an absent one as absent; the decisions and the
// item to store are those of the full answer. Wasm and native agree.
func TestW1_OmitStateSendsOnlyWhetherTheRowExists(t *testing.T) {
	ctx := context.Background()
	p := loadOrderSummary(t)
	unknownFirst := orderRun(2)
	unknownFirst.Events[0].Event.Type = "Mystery"
	unknownFirst.Events[0].Event.Data = abi.Item{"_tag": abi.S("Mystery")}
	existing := orderRun(3)
	existing.State = abi.Item{"orderId": abi.S("o-1"), "status": abi.S("placed"), "items": abi.N("4"), "total": abi.N("10"), "version": abi.N("7")}
	cases := map[string]struct {
		req     *abi.EvolveRequest
		present bool
	}{
		"new row k=1":               {orderRun(1), true},
		"new row k=10":              {orderRun(10), true},
		"existing row":              {existing, true},
		"unknown event first: none": {unknownFirst, false},
	}
	for name, c := range cases {
		for _, impl := range []struct {
			name string
			l    logic.Logic
		}{{"wasm", p}, {"native", nativeOrderSummary()}} {
			full, err := impl.l.Evolve(ctx, c.req)
			if err != nil {
				t.Fatalf("%s %s: %v", name, impl.name, err)
			}
			q := *c.req
			q.OmitState = true
			lean, err := impl.l.Evolve(ctx, &q)
			if err != nil {
				t.Fatalf("%s %s omitState: %v", name, impl.name, err)
			}
			if (full.State != nil) != c.present || (lean.State != nil) != c.present {
				t.Errorf("%s %s: state present full=%v lean=%v, want %v", name, impl.name, full.State != nil, lean.State != nil, c.present)
			}
			if c.present && (len(lean.State) != 0 || len(full.State) == 0) {
				t.Errorf("%s %s: omitState sent %d attributes (full answer %d), want 0", name, impl.name, len(lean.State), len(full.State))
			}
			full.State, lean.State = nil, nil
			if a, b := abi.AppendEvolveResponse(nil, full), abi.AppendEvolveResponse(nil, lean); string(a) != string(b) {
				t.Errorf("%s %s: decisions or item differ with omitState:\nfull %+v\nlean %+v", name, impl.name, full, lean)
			}
		}
	}
}

// TestW2_ExamplePluginReadsEveryPriceAsNatively folds order-summary runs
// whose prices sit at the edges of the guest's inline number parser (signs,
// points, zeros, 19 and 20 digits, exponents, DynamoDB's range, texts that
// are not numbers, a price before and after other attributes) through the
// Wasm plugin, whose word loads differ from the native build's, and
// natively: the responses are byte for byte the same.
func TestW2_ExamplePluginReadsEveryPriceAsNatively(t *testing.T) {
	p := loadOrderSummary(t)
	native := nativeOrderSummary()
	prices := []string{"12.5", "0", "-0", "0.000", "12.50", "-12.5", "1200", "0.05", "9999999999999999999",
		"10000000000000000000", "1e5", "1E-5", "+1", "1.", ".5", "1.2.3", "", "-", "abc", "1a",
		"0." + strings.Repeat("0", 130) + "1", "1" + strings.Repeat("0", 126), "12345678", "123456789"}
	for _, price := range prices {
		for _, extra := range []abi.Item{nil, {"a": abi.S("first")}, {"zz": abi.S("last"), "q": abi.N("3")}} {
			req := orderRun(2)
			d := req.Events[1].Event.Data
			d["price"] = abi.N(price)
			for k, v := range extra {
				d[k] = v
			}
			sameAsNative(t, p, native, req, fmt.Sprintf("price %q with %v", price, extra))
		}
	}
}

// sameAsNative folds req through the Wasm plugin w and natively (n) and
// fails t unless the responses are byte for byte the same; it returns the
// plugin's.
func sameAsNative(t *testing.T, w, n logic.Logic, req *abi.EvolveRequest, what string) *abi.EvolveResponse {
	t.Helper()
	ctx := context.Background()
	got, err := w.Evolve(ctx, req)
	if err != nil {
		t.Fatalf("%s: wasm: %v", what, err)
	}
	want, err := n.Evolve(ctx, req)
	if err != nil {
		t.Fatalf("%s: native: %v", what, err)
	}
	if a, b := abi.AppendEvolveResponse(nil, got), abi.AppendEvolveResponse(nil, want); string(a) != string(b) {
		t.Errorf("%s: wasm and native differ:\nwasm   %+v\nnative %+v", what, got, want)
	}
	return got
}

// loadOrderSummary loads the order-summary plugin for t, closed when t ends.
func loadOrderSummary(t *testing.T) *plugin.Plugin {
	t.Helper()
	p, err := plugin.Load(context.Background(), orderSummaryWasm(t), plugin.Config{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}
