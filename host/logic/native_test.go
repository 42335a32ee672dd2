package logic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type panicky struct{}

func (panicky) Describe() abi.Description                     { return abi.Description{Name: "p", Version: "9"} }
func (panicky) Key(*abi.KeyRequest) (*abi.KeyResponse, error) { panic("key boom") }
func (panicky) Evolve(*abi.EvolveRequest) (*abi.EvolveResponse, error) {
	return nil, errors.New("evolve failed")
}

func TestW2_NativeRunsAHandler(t *testing.T) {
	ctx := context.Background()
	l := logic.Native(guest.MustNew(ordersummary.Projection), "order-summary")
	defer l.Close(ctx)
	if d := l.Describe(); d.Name != "order-summary" || !d.Has(abi.CapEvolve) {
		t.Fatalf("describe %+v", d)
	}
	ev := abi.Event{Stream: "Order", StreamID: "o-1", Version: 1, Type: "OrderPlaced",
		Data: abi.Item{"_tag": abi.S("OrderPlaced"), "customer": abi.S("Ada")}}
	k, err := l.Key(ctx, &abi.KeyRequest{Source: "Order", Events: []abi.Event{ev}})
	if err != nil || k.Keys[0].Key["pk"].Str != "OrderSummary#o-1" {
		t.Fatalf("key %+v %v", k, err)
	}
	r, err := l.Evolve(ctx, &abi.EvolveRequest{Key: k.Keys[0].Key, StreamID: "o-1", Events: []abi.SourcedEvent{{Source: "Order", Event: ev}}})
	if err != nil || r.State["customer"].Str != "Ada" || r.Item["gsi1pk"].Str != "placed" || r.Decisions[0].Outcome != abi.Applied {
		t.Fatalf("evolve %+v %v", r, err)
	}
	// A guest-level failure is a *CallError naming the plugin and export.
	_, err = l.Evolve(ctx, &abi.EvolveRequest{Events: []abi.SourcedEvent{{Source: "Nope", Event: ev}}})
	var ce *logic.CallError
	if !errors.As(err, &ce) || ce.Function != "evolve" || ce.Plugin != "order-summary@1.0.0" {
		t.Fatalf("unknown source: %v", err)
	}
}

func TestW4_NativePanicIsACallError(t *testing.T) {
	ctx := context.Background()
	l := logic.Native(panicky{}, "p")
	var ce *logic.CallError
	if _, err := l.Key(ctx, &abi.KeyRequest{}); !errors.As(err, &ce) || ce.Function != "key" {
		t.Fatalf("panic: %v", err)
	}
	if _, err := l.Evolve(ctx, &abi.EvolveRequest{}); !errors.As(err, &ce) || ce.Function != "evolve" {
		t.Fatalf("error: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Evolve(cctx, &abi.EvolveRequest{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
