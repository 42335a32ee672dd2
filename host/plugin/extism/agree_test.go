package extism_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/ordercases"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// TestW3_ExtismAndRawAgree is the differential test of SPEC W3: the same
// requests through the Go plugin on the raw ABI, the Go projection run
// natively and the AssemblyScript plugin through Extism give identical
// responses, decoded and byte for byte.
func TestW3_ExtismAndRawAgree(t *testing.T) {
	ctx := context.Background()
	raw, err := plugin.Load(ctx, orderSummaryRaw(t), plugin.Config{CacheDir: cacheDir})
	require.NoError(t, err)
	defer raw.Close(ctx)
	as := load(t, orderSummaryAS(t), extism.Config{})
	native := nativeOrderSummary()
	impls := []struct {
		name string
		l    logic.Logic
	}{{"raw", raw}, {"native", native}, {"extism", as}}

	require.Equal(t, raw.Describe(), as.Describe(), "describe")
	require.Equal(t, "order-summary@1.0.0", as.Name())

	mistyped := ordercases.MistypedData()
	for name, req := range ordercases.Agree() {
		t.Run(name, func(t *testing.T) {
			var want *abi.EvolveResponse
			for _, impl := range impls {
				got, err := impl.l.Evolve(ctx, req)
				require.NoError(t, err, impl.name)
				if want == nil {
					want = got
					continue
				}
				require.Equal(t, want, got, "%s differs from raw", impl.name)
			}
			if msg, ok := mistyped[name]; ok {
				// event data of the wrong type fails as bad event data
				last := want.Decisions[len(want.Decisions)-1]
				require.Equal(t, &abi.Error{Tag: "Error", Message: msg}, last.Error)
			}
			in := abi.AppendEvolveRequest(nil, req)
			rb, err := raw.Call(ctx, abi.CapEvolve, in)
			require.NoError(t, err)
			ab, err := as.Call(ctx, abi.CapEvolve, in)
			require.NoError(t, err)
			if !bytes.Equal(rb, ab) {
				t.Fatalf("evolve bytes differ:\nraw    %q\nextism %q", rb, ab)
			}
		})
	}

	// a row whose state does not decode: the same error, naming the
	// attribute and worded as stored state of the wrong type
	failing := ordercases.FailingState()
	for name, req := range ordercases.AgreeFailing() {
		in := abi.AppendEvolveRequest(nil, req)
		_, want := raw.Call(ctx, abi.CapEvolve, in)
		require.ErrorContains(t, want, failing[name], name)
		require.NotContains(t, want.Error(), "malformed", name)
		_, got := as.Call(ctx, abi.CapEvolve, in)
		require.Error(t, got, name)
		require.Equal(t, want.Error(), got.Error(), name)
	}

	// key, and the optional exports, byte for byte.
	keyReq := &abi.KeyRequest{Source: "Order"}
	for _, e := range orderRun(3).Events {
		keyReq.Events = append(keyReq.Events, e.Event)
	}
	keyReq.Events[1].StreamID = "o-2#x"
	initialEv := ordercases.Placed(1, "c").Event
	calls := map[string][]byte{
		abi.CapKey:      abi.AppendKeyRequest(nil, keyReq),
		abi.CapInitial:  abi.AppendInitialRequest(nil, &abi.InitialRequest{Source: "Order", StreamID: "o-9", Key: ordersummary.RowKey("o-9"), Event: &initialEv}),
		abi.CapTerminal: abi.AppendTerminalRequest(nil, &abi.TerminalRequest{Source: "Order", Error: abi.Error{Tag: "UnknownEvent", Message: "x"}}),
		abi.CapToItem:   abi.AppendToItemRequest(nil, &abi.ToItemRequest{State: ordercases.Existing(), StreamID: "o-1", Key: ordersummary.RowKey("o-1")}),
		abi.CapEffects:  abi.AppendEffectsRequest(nil, &abi.EffectsRequest{Source: "Order", StreamID: "o-1", Key: ordersummary.RowKey("o-1"), Event: initialEv, Next: ordercases.Existing()}),
	}
	for fn, in := range calls {
		rb, err := raw.Call(ctx, fn, in)
		require.NoError(t, err, fn)
		ab, err := as.Call(ctx, fn, in)
		require.NoError(t, err, fn)
		if !bytes.Equal(rb, ab) {
			t.Errorf("%s bytes differ:\nraw    %q\nextism %q", fn, rb, ab)
		}
	}
	kr, err := as.Key(ctx, keyReq)
	require.NoError(t, err)
	require.Equal(t, abi.S("OrderSummary#o-2#x"), kr.Keys[1].Key["pk"])

	// A request for an unknown source is a guest error on both.
	bad := orderRun(1)
	bad.Events[0].Source = "Nope"
	_, rerr := raw.Evolve(ctx, bad)
	_, aerr := as.Evolve(ctx, bad)
	require.ErrorIs(t, rerr, plugin.ErrGuest)
	require.ErrorIs(t, aerr, extism.ErrGuest)
	require.Contains(t, aerr.Error(), `guest error: evolve: guest: projection "order-summary" has no source "Nope"`)
	require.Contains(t, rerr.Error(), `guest error: evolve: guest: projection "order-summary" has no source "Nope"`)
}
