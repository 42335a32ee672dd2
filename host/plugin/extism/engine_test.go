package extism_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// orderHost runs the order-summary projection on a fresh ddblocal, through
// the Go plugin on the raw ABI ("raw") or the AssemblyScript plugin on
// Extism ("extism", handed to the host as logic.Logic).
func orderHost(t *testing.T, kind string) (*host.Host, *testenv.Env, string) {
	env := testenv.Start(t)
	table := env.Table(t, "orders", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: ordersummary.Stream, EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped", "OrderRefunded"}, Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "orders", Table: table, Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}},
	}
	var opts []host.Option
	switch kind {
	case "extism":
		cfg.Projections[0].Plugin = "native:orders"
		opts = append(opts, host.WithNative("orders", load(t, orderSummaryAS(t), extism.Config{})))
	default:
		cfg.Projections[0].Plugin = wasmbuild.BuildPath(t, "../../../plugins/examples/order-summary/wasm")
	}
	h, err := host.New(context.Background(), cfg, append(opts, host.WithClient(env.Client))...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, env, table
}

func orderRecords(t *testing.T, h *host.Host, order string, evs ...host.NewEvent) []host.Record {
	out, err := h.Append(context.Background(), ordersummary.Stream, order, 0, evs...)
	require.NoError(t, err)
	var recs []host.Record
	for i, ev := range out {
		recs = append(recs, host.Record{EventName: "INSERT", EventID: fmt.Sprint(i),
			DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(100 + i)}})
	}
	return recs
}

// TestW3_ExtismPluginThroughTheEngine runs the same change feed through the
// engine with the Go plugin and with the AssemblyScript plugin: a batch that
// holds only the last events (the engine fills the gap from the event
// store), then everything redelivered out of order, an unknown event type
// that fails its row; the rows written are identical.
func TestW3_ExtismPluginThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	rows := map[string]map[string]abi.Item{}
	for _, kind := range []string{"raw", "extism"} {
		h, env, table := orderHost(t, kind)
		recs := orderRecords(t, h, "o-1",
			host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c-42")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("a"), "price": abi.N("12.5")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("b"), "price": abi.N("0.1")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("c"), "price": abi.N("0.2")}},
			host.NewEvent{Type: "OrderShipped", Data: abi.Item{}},
		)
		res, err := h.ProcessBatch(ctx, recs[3:])
		require.NoError(t, err)
		or := res.Projections["orders"].Rows
		require.Len(t, or, 1, kind)
		require.NoError(t, or[0].Err, kind)
		require.Equal(t, []uint64{1, 2, 3, 4, 5}, versionsOf(or[0].Applied()), "%s: the gap is filled", kind)

		res, err = h.ProcessBatch(ctx, []host.Record{recs[2], recs[0], recs[4], recs[1]})
		require.NoError(t, err)
		for _, o := range res.Projections["orders"].Rows {
			require.NoError(t, o.Err, kind)
			require.Empty(t, o.Applied(), "%s: redelivered events are already applied", kind)
		}
		bad := orderRecords(t, h, "o-2",
			host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c-7")}},
			host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}})
		res, err = h.ProcessBatch(ctx, bad)
		require.NoError(t, err)
		require.Equal(t, []int{0}, res.Failed(), "%s: the unknown event fails its row, reported from its earliest record", kind)
		or = res.Projections["orders"].Rows
		require.Len(t, or, 1, kind)
		require.ErrorContains(t, or[0].Err, `UnknownEvent: order-summary does not fold "OrderRefunded"`, kind)

		rows[kind] = map[string]abi.Item{}
		for _, order := range []string{"o-1", "o-2"} {
			it, err := dynamo.New(env.Client).GetItem(ctx, table, ordersummary.RowKey(order))
			require.NoError(t, err)
			delete(it, "createdAt")
			rows[kind][order] = it
		}
		o1 := rows[kind]["o-1"]
		require.Equal(t, "12.8", o1["total"].Str, "%s: exact decimal sums, as the Go plugin keeps totals", kind)
		require.Equal(t, "shipped", o1["status"].Str, kind)
		require.Equal(t, "5", o1["version"].Str, kind)
	}
	for _, order := range []string{"o-1", "o-2"} {
		require.True(t, abi.ItemsEqual(rows["raw"][order], rows["extism"][order]), "order %s:\nraw    %v\nextism %v", order, rows["raw"][order], rows["extism"][order])
	}
}

func versionsOf(evs []abi.Event) []uint64 {
	var vs []uint64
	for _, e := range evs {
		vs = append(vs, e.Version)
	}
	return vs
}
