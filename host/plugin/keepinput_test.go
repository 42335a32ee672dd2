package plugin_test

import (
	"context"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
)

// TestW1_AGoSDKPluginIsAskedForItsInputBufferOnlyWhenARequestOutgrowsIt:
// a plugin whose description says it keeps its input buffer (every guest
// SDK plugin) gets dynafold_alloc calls only for a request larger than the
// buffer its instance already has (the host asks for room to spare), and
// folds every request as natively; a plugin that does not say so is asked
// before every request, as in ABI 1.2.
func TestW1_AGoSDKPluginIsAskedForItsInputBufferOnlyWhenARequestOutgrowsIt(t *testing.T) {
	ctx := context.Background()
	p, err := plugin.Load(ctx, orderSummaryWasm(t), plugin.Config{CacheDir: cacheDir, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if !p.Describe().KeepsInput {
		t.Fatal("the guest SDK's description does not say it keeps its input")
	}
	native := nativeOrderSummary()
	runs := []int{1, 10, 3, 100, 1, 50, 100, 2}
	if small, large := len(abi.AppendEvolveRequest(nil, orderRun(10))), len(abi.AppendEvolveRequest(nil, orderRun(100))); small >= 4<<10 || large <= 4<<10 {
		t.Fatalf("requests of %d and %d bytes: the test expects one below 4 KiB and one above", small, large)
	}
	for _, k := range runs {
		req := orderRun(k)
		w, err := p.Evolve(ctx, req)
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		n, err := native.Evolve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := abi.AppendEvolveResponse(nil, w), abi.AppendEvolveResponse(nil, n); string(a) != string(b) {
			t.Fatalf("k=%d: wasm and native differ:\nwasm   %+v\nnative %+v", k, w, n)
		}
	}
	// One buffer for the small requests (4 KiB at least), one more when the
	// first run of 100 events outgrew it; none after.
	if s := p.Stats(); s.Allocs != 2 || s.Calls != uint64(len(runs)) {
		t.Errorf("%d calls made %d dynafold_alloc calls, want 2", s.Calls, s.Allocs)
	}

	raw := loadGuest(t, "good", plugin.Config{PoolSize: 1})
	if raw.Describe().KeepsInput {
		t.Fatal("a 1.2 guest says it keeps its input")
	}
	for i := 0; i < 5; i++ {
		if _, err := raw.Evolve(ctx, evolveReq("Placed", "Placed")); err != nil {
			t.Fatal(err)
		}
	}
	if s := raw.Stats(); s.Allocs != 5 {
		t.Errorf("a guest that does not keep its input: %d dynafold_alloc calls for 5 requests, want 5", s.Allocs)
	}
}
