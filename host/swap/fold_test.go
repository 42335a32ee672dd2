package swap_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestH3_SmokeTestFoldIsTheEnginesFold: the smoke test's Fold gives, row for
// row, what the host writes to DynamoDB for the same events delivered out
// of order and twice (the engine's own fields aside), and fails the same
// rows: it is the engine's fold, not a copy of its ordering.
func TestH3_SmokeTestFoldIsTheEnginesFold(t *testing.T) {
	ctx := context.Background()
	p, err := guest.New(ordersummary.Projection)
	if err != nil {
		t.Fatal(err)
	}
	l := logic.Native(p, "order-summary")
	env := testenv.Start(t)
	rows := env.Table(t, "rows", false)
	h, err := host.New(ctx, &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: "native:o", Table: rows,
			Checkpoint: host.CheckpointConfig{Field: "version"}, CreatedAt: "-"}},
	}, host.WithClient(env.Client), host.WithNative("o", l))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)

	var all []abi.Event
	appendAll := func(id string, evs ...host.NewEvent) {
		out, err := h.Append(ctx, "Order", id, 0, evs...)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, out...)
	}
	appendAll("o-1", host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("a"), "price": abi.N("1.5")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("b"), "price": abi.N("2.25")}},
		host.NewEvent{Type: "OrderShipped", Data: abi.Item{}})
	appendAll("o-2", host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("bob")}},
		host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}}) // not folded: the row fails
	appendAll("o-3", host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("cy")}})

	batch := append(append([]abi.Event(nil), all...), all[1], all[4]) // two delivered twice
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	res, err := h.ApplyEvents(ctx, "summaries", batch...)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, o := range res.Rows {
		failed[swap.KeyString(o.Key)] = o.Err != nil
	}

	src := make([]swap.SrcEvent, len(batch))
	for i, e := range batch {
		src[i] = swap.SrcEvent{Event: e}
	}
	folded, err := swap.Fold(ctx, l, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(folded) != 3 {
		t.Fatalf("Fold gave %d rows, want 3", len(folded))
	}
	for _, r := range folded {
		k := swap.KeyString(r.Key)
		if (r.Err != nil) != failed[k] {
			t.Errorf("row %s: Fold error %v, but the host failed it: %v", k, r.Err, failed[k])
			continue
		}
		written := env.Get(t, rows, r.Key)
		if r.Err != nil {
			if written != nil {
				t.Errorf("row %s failed yet was written: %v", k, written)
			}
			continue
		}
		delete(written, "version") // the checkpoint: the configuration's, which Fold does not know
		delete(r.Item, "version")
		if diffs := swap.CompareRows([]swap.Row{r}, []abi.Item{written}); len(diffs) > 0 {
			t.Errorf("row %s: Fold differs from what the host wrote: %v", k, diffs)
		}
	}
	if !failed["pk=OrderSummary#o-2,sk=OrderSummary"] {
		t.Fatalf("the row with an unfolded event did not fail: %v", failed)
	}
}
