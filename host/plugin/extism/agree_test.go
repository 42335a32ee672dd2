package extism_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// ev builds an Order event of o-1.
func ev(v uint64, typ string, data abi.Item) abi.SourcedEvent {
	if data == nil {
		data = abi.Item{}
	}
	data["_tag"] = abi.S(typ)
	return abi.SourcedEvent{Source: "Order", Event: abi.Event{
		Stream: "Order", StreamID: "o-1", Version: v, Type: typ, Data: data,
		Timestamp: "2026-01-01T00:00:00Z",
	}}
}

func placed(v uint64, customer string) abi.SourcedEvent {
	return ev(v, "OrderPlaced", abi.Item{"customer": abi.S(customer)})
}

func added(v uint64, price string) abi.SourcedEvent {
	return ev(v, "ItemAdded", abi.Item{"sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N(price)})
}

// existing is a row as read: the state's attributes plus the hidden ones.
func existing() abi.Item {
	return abi.Item{
		"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary"),
		"orderId": abi.S("o-1"), "customer": abi.S("c-7"), "status": abi.S("placed"),
		"items": abi.N("3"), "total": abi.N("37.50"), "version": abi.N("4"),
		"gsi1pk": abi.S("placed"), "gsi1sk": abi.S("o-1"),
		"createdAt": abi.S("2026-01-01T00:00:00Z"), "__edd_e__": abi.S("OrderSummary"),
		"tags": abi.SS("a", "b"), "nested": abi.M(abi.Item{"l": abi.L(abi.N("1"), abi.Null())}),
	}
}

// agreeCases are evolve requests for the differential test.
func agreeCases() map[string]*abi.EvolveRequest {
	key := ordersummary.RowKey("o-1")
	run := func(state abi.Item, events ...abi.SourcedEvent) *abi.EvolveRequest {
		return &abi.EvolveRequest{Key: key, StreamID: "o-1", State: state, Events: events}
	}
	cases := map[string]*abi.EvolveRequest{
		"in order k=1":                           orderRun(1),
		"in order k=10":                          orderRun(10),
		"in order k=100":                         orderRun(100),
		"gap in versions":                        run(nil, placed(1, "c-1"), added(2, "3.25"), added(5, "4"), ev(9, "OrderShipped", nil)),
		"absent state starts from initial":       run(nil, added(1, "9.99")),
		"existing state":                         run(existing(), added(5, "2.5"), ev(6, "OrderShipped", nil)),
		"existing state NULLs":                   run(abi.Item{"customer": abi.Null(), "total": abi.Null(), "items": abi.N("2")}, added(3, "1")),
		"unknown event type stops the run":       run(nil, placed(1, "c-1"), ev(2, "OrderCancelled", nil), added(3, "1")),
		"unknown event type first: stays absent": run(nil, ev(1, "Mystery", nil), placed(2, "c")),
		"unknown event on existing state":        run(existing(), added(5, "1"), ev(6, "Refunded", nil)),
		"quoted event type":                      run(nil, ev(1, "We\"ird\\ \t\x01 Ünï ☃ \u00ad\xff", nil)),
		"missing price is BadEvent":              run(nil, placed(1, "c"), ev(2, "ItemAdded", abi.Item{"sku": abi.S("x")})),
		"string price is BadEvent":               run(nil, ev(1, "ItemAdded", abi.Item{"price": abi.S("12")})),
		"out of range price is BadEvent":         run(nil, ev(1, "ItemAdded", abi.Item{"price": abi.N("1e400")})),
		"placed without customer":                run(nil, ev(1, "OrderPlaced", nil)),
		"placed with a number for customer":      run(nil, placed(1, "c"), ev(2, "OrderPlaced", abi.Item{"customer": abi.N("5"), "zz": abi.L(abi.S("x"))})),
		"placed with NULL customer":              run(existing(), ev(5, "OrderPlaced", abi.Item{"customer": abi.Null()})),
		"empty request stream id":                {Key: key, State: nil, Events: []abi.SourcedEvent{placed(1, "c")}},
		"no events":                              run(existing()),
		"float 0.1+0.2":                          run(nil, added(1, "0.1"), added(2, "0.2")),
		"float thirds":                           run(nil, added(1, "0.3333333333333333"), added(2, "0.6666666666666666"), added(3, "1e-3")),
		"float large e+06":                       run(nil, added(1, "999999.99"), added(2, "999999.99")),
		"float integer e+07":                     run(nil, added(1, "12345678")),
		"float tiny e-07":                        run(nil, added(1, "1e-7")),
		"float tiny 0.0001":                      run(nil, added(1, "0.0001"), added(2, "0.00002")),
		"float negative":                         run(nil, added(1, "-5.75"), added(2, "-0.5")),
		"float long mantissa":                    run(nil, added(1, "1234567890.123456789012345"), added(2, "98765.4321e3")),
		"float exponent forms":                   run(nil, added(1, "1.5E2"), added(2, "+2.25"), added(3, "1e21"), added(4, "3e22")),
		"many small prices":                      run(nil, manyPrices(40)...),
	}
	// Each again as the engine sends it: with ABI 1.1's omitState.
	lean := map[string]*abi.EvolveRequest{}
	for name, q := range cases {
		if len(q.Events) > 0 && len(q.Events) < 50 {
			l := *q
			l.OmitState = true
			lean[name+" (omitState)"] = &l
		}
	}
	maps.Copy(cases, lean)
	return cases
}

func manyPrices(n int) []abi.SourcedEvent {
	var evs []abi.SourcedEvent
	for i := 1; i <= n; i++ {
		evs = append(evs, added(uint64(i), fmt.Sprintf("%d.%02d", i*7, (i*37)%100)))
	}
	return evs
}

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

	for name, req := range agreeCases() {
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

	// key, and the optional exports, byte for byte.
	keyReq := &abi.KeyRequest{Source: "Order"}
	for _, e := range orderRun(3).Events {
		keyReq.Events = append(keyReq.Events, e.Event)
	}
	keyReq.Events[1].StreamID = "o-2#x"
	initialEv := placed(1, "c").Event
	calls := map[string][]byte{
		abi.CapKey:      abi.AppendKeyRequest(nil, keyReq),
		abi.CapInitial:  abi.AppendInitialRequest(nil, &abi.InitialRequest{Source: "Order", StreamID: "o-9", Key: ordersummary.RowKey("o-9"), Event: &initialEv}),
		abi.CapTerminal: abi.AppendTerminalRequest(nil, &abi.TerminalRequest{Source: "Order", Error: abi.Error{Tag: "UnknownEvent", Message: "x"}}),
		abi.CapToItem:   abi.AppendToItemRequest(nil, &abi.ToItemRequest{State: existing(), StreamID: "o-1", Key: ordersummary.RowKey("o-1")}),
		abi.CapEffects:  abi.AppendEffectsRequest(nil, &abi.EffectsRequest{Source: "Order", StreamID: "o-1", Key: ordersummary.RowKey("o-1"), Event: initialEv, Next: existing()}),
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
	require.Contains(t, aerr.Error(), `has no source "Nope"`)
}
