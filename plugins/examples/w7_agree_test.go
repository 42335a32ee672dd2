//go:build !wasip1

package examples_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/ordercases"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// TestW7_RustAndCAnswerAsTheGoPlugin sends every request of the
// differential tests (runs in order and with gaps, existing rows with
// NULLs and hidden attributes, unknown and mistyped events — event data of
// the wrong type failing as bad event data —, quoted event types, numbers
// in every form, with and without omitState) to the Go,
// Rust and C order-summary modules: describe, evolve, key and the optional
// exports answer with the same bytes; a request for an unknown source, and
// a row whose state does not decode, are the same guest error in each.
func TestW7_RustAndCAnswerAsTheGoPlugin(t *testing.T) {
	ctx := context.Background()
	goP := loadOrderSummary(t, "go")
	// Event data of the wrong type fails as bad event data; the Rust and C
	// modules answer the same bytes (below).
	agree := ordercases.Agree()
	for name, want := range ordercases.MistypedData() {
		resp, err := goP.Evolve(ctx, agree[name])
		require.NoError(t, err, name)
		last := resp.Decisions[len(resp.Decisions)-1]
		require.Equal(t, abi.Failed, last.Outcome, name)
		require.Equal(t, &abi.Error{Tag: "Error", Message: want}, last.Error, name)
	}
	for _, lang := range []string{"rust", "c"} {
		t.Run(lang, func(t *testing.T) {
			p := loadOrderSummary(t, lang)
			require.Equal(t, goP.Describe(), p.Describe(), "describe")
			for name, req := range ordercases.Agree() {
				in := abi.AppendEvolveRequest(nil, req)
				want, err := goP.Call(ctx, abi.CapEvolve, in)
				require.NoError(t, err, name)
				got, err := p.Call(ctx, abi.CapEvolve, in)
				require.NoError(t, err, name)
				if !bytes.Equal(want, got) {
					w, _ := abi.DecodeEvolveResponse(want)
					g, _ := abi.DecodeEvolveResponse(got)
					t.Errorf("%s: evolve differs:\ngo   %+v\n%-4s %+v\nbytes go   %q\nbytes %-4s %q", name, w, lang, g, want, lang, got)
				}
			}
			failing := ordercases.FailingState()
			for name, req := range ordercases.AgreeFailing() {
				in := abi.AppendEvolveRequest(nil, req)
				_, want := goP.Call(ctx, abi.CapEvolve, in)
				require.ErrorContains(t, want, failing[name], name)
				require.NotContains(t, want.Error(), "malformed", name)
				_, got := p.Call(ctx, abi.CapEvolve, in)
				require.ErrorIs(t, got, plugin.ErrGuest, name)
				require.Equal(t, want.Error(), got.Error(), name)
			}

			keyReq := &abi.KeyRequest{Source: "Order"}
			for _, e := range ordercases.Run(3).Events {
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
				want, err := goP.Call(ctx, fn, in)
				require.NoError(t, err, fn)
				got, err := p.Call(ctx, fn, in)
				require.NoError(t, err, fn)
				if !bytes.Equal(want, got) {
					t.Errorf("%s differs:\ngo   %q\n%-4s %q", fn, want, lang, got)
				}
			}

			bad := ordercases.Run(1)
			bad.Events[0].Source = "Nope"
			_, err := p.Evolve(ctx, bad)
			require.ErrorIs(t, err, plugin.ErrGuest)
			require.ErrorContains(t, err, `evolve: guest: projection "order-summary" has no source "Nope"`)
		})
	}
}

// TestW7_RustAndCSumRandomPricesAsGoDoes folds random prices (up to 21
// digits, fractions, exponents, signs) through the Go, Rust and C
// order-summary modules: the exact totals, the BadEvent decisions for
// numbers DynamoDB does not store and the BadTotal decisions for sums of
// more than 38 digits are the same bytes.
func TestW7_RustAndCSumRandomPricesAsGoDoes(t *testing.T) {
	ctx := context.Background()
	goP := loadOrderSummary(t, "go")
	others := map[string]*plugin.Plugin{"rust": loadOrderSummary(t, "rust"), "c": loadOrderSummary(t, "c")}
	r := rand.New(rand.NewPCG(29, 7))
	n := 1500
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("DYNAFOLD_NUMBERS_N")); err == nil {
		n = v
	}
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1"}
		var prices []string
		for v := 1; v <= 1+r.IntN(3); v++ {
			p := ordercases.RandomNumber(r)
			prices = append(prices, p)
			req.Events = append(req.Events, ordercases.Added(uint64(v), p))
		}
		in := abi.AppendEvolveRequest(nil, req)
		want, err := goP.Call(ctx, abi.CapEvolve, in)
		require.NoError(t, err)
		if w, err := abi.DecodeEvolveResponse(want); err == nil {
			for _, d := range w.Decisions {
				tag := ""
				if d.Error != nil {
					tag = "/" + d.Error.Tag
				}
				seen[d.Outcome.String()+tag]++
			}
		}
		for lang, p := range others {
			got, err := p.Call(ctx, abi.CapEvolve, in)
			require.NoError(t, err)
			if !bytes.Equal(want, got) {
				w, _ := abi.DecodeEvolveResponse(want)
				g, _ := abi.DecodeEvolveResponse(got)
				t.Fatalf("prices %q:\ngo   total %v decisions %v\n%-4s total %v decisions %v", prices, w.State["total"], w.Decisions, lang, g.State["total"], g.Decisions)
			}
		}
	}
	t.Logf("decisions: %v", seen)
	for _, k := range []string{"applied", "failed/BadEvent", "failed/BadTotal"} {
		require.Positive(t, seen[k], "no %s decision among %d runs", k, n)
	}
}
