package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type stock struct {
	Qty int64 `ddb:"qty"`
}

// stockProjection keeps one row per warehouse: the sum of its Stocked
// events' qty.
var stockProjection = guest.Projection[stock]{
	Name: "stock", Version: "1.0.0", Stream: "Warehouse", EventTypes: []string{"Stocked"},
	Key: func(id string, _ guest.Event) (guest.Key, bool) {
		return guest.StringKey("pk", "Stock#"+id, "sk", "S"), true
	},
	Initial: func(string, guest.Event) stock { return stock{} },
	Evolve: func(s stock, e guest.Event) (stock, error) {
		var d struct {
			Qty int64 `ddb:"qty"`
		}
		if err := e.Decode(&d); err != nil {
			return s, err
		}
		s.Qty += d.Qty
		return s, nil
	},
}

// stockHost is a host of the issue's inventory schema with the stock
// projection (checkpoint field "version"), with opts after its own.
func stockHost(t *testing.T, policy host.DecodeFailurePolicy, opts ...host.Option) (*host.Host, *testenv.Env, string, string) {
	t.Helper()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "stock", false)
	cfg := stockConfig(events, rows, "version")
	cfg.OnDecodeFailure = policy
	return stockHostOn(t, env, cfg, opts...), env, events, rows
}

// stockConfig is the configuration of stockHost on its tables, with the
// checkpoint field named field.
func stockConfig(events, rows, field string) *host.Config {
	return &host.Config{
		EventStore: host.EventStoreConfig{Table: events, Schema: "inventory", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Warehouse", EventTypes: []string{"Stocked"}, Composite: []string{"warehouseId"}}}},
		Projections: []host.ProjectionConfig{{Name: "stock", Plugin: "native:stock", Table: rows, Checkpoint: host.CheckpointConfig{Field: field},
			WrittenBy: "writtenBy"}},
	}
}

// stockHostOn is a host of cfg with the stock projection, with opts after
// its own.
func stockHostOn(t *testing.T, env *testenv.Env, cfg *host.Config, opts ...host.Option) *host.Host {
	t.Helper()
	p, err := guest.New(stockProjection)
	require.NoError(t, err)
	opts = append([]host.Option{host.WithNative("stock", logic.Native(p, "stock")), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	h, err := host.New(context.Background(), cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// strayItem is the issue's hand-written item: the partition key of
// warehouse pkOf, but streamId id, at version.
func strayItem(h *host.Host, pkOf, id string, version uint64, qty string) abi.Item {
	it := h.EventItem(abi.Event{Stream: "Warehouse", StreamID: id, Version: version, Type: "Stocked",
		Data: abi.Item{"qty": abi.N(qty)}, Timestamp: "2026-11-29T12:00:00.000Z"})
	own := h.EventItem(abi.Event{Stream: "Warehouse", StreamID: pkOf, Version: version, Type: "Stocked"})
	it["pk"] = own["pk"]
	return it
}

// lambdaFile renders records as the Lambda event file `host apply` reads,
// and parses it back as `host apply` does.
func lambdaFile(t *testing.T, items ...abi.Item) []host.Record {
	t.Helper()
	body := `{"Records": [`
	for i, it := range items {
		img, err := ddbjson.ItemToJSON(it)
		require.NoError(t, err)
		keys, err := ddbjson.ItemToJSON(abi.Item{"pk": it["pk"], "sk": it["sk"]})
		require.NoError(t, err)
		if i > 0 {
			body += ","
		}
		body += fmt.Sprintf(`{"eventID": "e%d", "eventName": "INSERT", "eventSource": "aws:dynamodb",
			"dynamodb": {"Keys": %s, "NewImage": %s, "SequenceNumber": "%d", "StreamViewType": "NEW_IMAGE"}}`, i, keys, img, 100+i)
	}
	recs, err := host.ParseEvent([]byte(body + "]}"))
	require.NoError(t, err)
	return recs
}

func stockRow(t *testing.T, env *testenv.Env, table, id string) abi.Item {
	t.Helper()
	return env.Get(t, table, abi.Item{"pk": abi.S("Stock#" + id), "sk": abi.S("S")})
}

// TestES7_TheIssuesStrayItemIsNeverFolded is the issue's case 1 as it was
// met: an item put by hand with pk "$inventory#v1#warehouse#g-idmismatch"
// and streamId "someone-else", version 1, qty 3, arrives in a `host apply`
// file. It fails to decode, naming both values, and is reported (its
// record goes back to the source); the row of someone-else is not made
// from it. When the real version 1 of someone-else is appended (qty 100)
// and delivered, it is applied: the row holds 100.
func TestES7_TheIssuesStrayItemIsNeverFolded(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	stray := strayItem(h, "g-idmismatch", "someone-else", 1, "3")
	require.Equal(t, "$inventory#v1#warehouse#g-idmismatch", stray["pk"].Str)
	env.Put(t, events, stray)

	res, err := h.ProcessBatch(ctx, lambdaFile(t, stray))
	require.NoError(t, err)
	require.Len(t, res.DecodeFailures, 1)
	f := res.DecodeFailures[0]
	assert.False(t, f.Skipped)
	assert.ErrorIs(t, f.Err, host.ErrEventItemKey)
	assert.Contains(t, f.Err.Error(), `"$inventory#v1#warehouse#g-idmismatch"`)
	assert.Contains(t, f.Err.Error(), `streamId "someone-else"`)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures, "reported, to be delivered again")
	assert.Nil(t, stockRow(t, env, rows, "someone-else"), "no row made from the stray item")
	assert.Nil(t, stockRow(t, env, rows, "g-idmismatch"))

	evs, err := h.Append(ctx, "Warehouse", "someone-else", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("100")}})
	require.NoError(t, err)
	res, err = h.ProcessBatch(ctx, lambdaFile(t, h.EventItem(evs[0])))
	require.NoError(t, err)
	require.Empty(t, res.DecodeFailures)
	out := res.Projections["stock"].Rows
	require.Len(t, out, 1)
	require.NoError(t, out[0].Err)
	assert.True(t, out[0].Written, "applied, not 'already applied'")
	row := stockRow(t, env, rows, "someone-else")
	require.NotNil(t, row)
	assert.Equal(t, "100", row["qty"].Str)
	assert.Equal(t, "1", row["version"].Str)
}

// TestES7_ASkippedStrayItemIsListedAndNotFolded: under onDecodeFailure
// "skip", the stray item's record is acknowledged but still listed with
// its error, and folds into nothing.
func TestES7_ASkippedStrayItemIsListedAndNotFolded(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, host.DecodeFailureSkip)
	stray := strayItem(h, "g-1", "someone-else", 1, "3")
	env.Put(t, events, stray)
	res, err := h.ProcessBatch(ctx, lambdaFile(t, stray))
	require.NoError(t, err)
	require.Len(t, res.DecodeFailures, 1)
	assert.True(t, res.DecodeFailures[0].Skipped)
	assert.ErrorIs(t, res.DecodeFailures[0].Err, host.ErrEventItemKey)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Nil(t, stockRow(t, env, rows, "someone-else"))
}

// strayInTheMiddle stores warehouse g-1's versions 1 and 3 as appends
// would, and at version 2 (its sort key, its partition) an item naming
// someone-else: what a gap read of g-1 meets.
func strayInTheMiddle(t *testing.T, h *host.Host, env *testenv.Env, events string) (v1, v3 abi.Item) {
	t.Helper()
	evs, err := h.Append(context.Background(), "Warehouse", "g-1", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("1")}})
	require.NoError(t, err)
	env.Put(t, events, strayItem(h, "g-1", "someone-else", 2, "3"))
	v3 = h.EventItem(abi.Event{Stream: "Warehouse", StreamID: "g-1", Version: 3, Type: "Stocked",
		Data: abi.Item{"qty": abi.N("5")}, Timestamp: "2026-11-29T12:00:00.000Z"})
	env.Put(t, events, v3)
	return h.EventItem(evs[0]), v3
}

// TestES7_AGapReadThatMeetsAStrayItemFailsTheRowNamingIt: a batch of g-1's
// versions 1 and 3 needs version 2 from the event store, which holds the
// stray item there. The row is not written (nothing of g-1 is folded past
// or around the item); its error names the item, both values and what to
// do, and its record is reported.
func TestES7_AGapReadThatMeetsAStrayItemFailsTheRowNamingIt(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	v1, v3 := strayInTheMiddle(t, h, env, events)

	res, err := h.ProcessBatch(ctx, lambdaFile(t, v1, v3))
	require.NoError(t, err)
	require.Empty(t, res.DecodeFailures, "both records decode")
	out := res.Projections["stock"].Rows
	require.Len(t, out, 1)
	require.Error(t, out[0].Err)
	assert.ErrorIs(t, out[0].Err, host.ErrEventItemKey)
	msg := out[0].Err.Error()
	assert.Contains(t, msg, "gap-fill read of Warehouse g-1")
	assert.Contains(t, msg, `streamId "someone-else"`)
	assert.Contains(t, msg, `sk "$inventory#v1#warehouse.event_1#0000000002"`, "the item")
	assert.Contains(t, msg, "remove the item", "what to do")
	assert.False(t, out[0].Written)
	assert.Nil(t, stockRow(t, env, rows, "g-1"))
	resp, err := res.Response()
	require.NoError(t, err)
	assert.NotEmpty(t, resp.BatchItemFailures)
}

// TestES7_AGapReadThatMeetsAStrayItemFailsThatInstanceOnly: in a row two
// stream instances feed, the instance whose gap read meets a stray item
// fails (its events leave the write, its checkpoint stays), and the other
// instance's events are applied.
func TestES7_AGapReadThatMeetsAStrayItemFailsThatInstanceOnly(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "ledger", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: events, Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: rows,
			Checkpoint: host.CheckpointConfig{Map: "checkpoints"}, Revision: &host.RevisionConfig{Field: "rev"}}},
	}
	h, err := host.New(ctx, cfg, host.WithNative("ledger", &testlogic.Ledger{}), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	add := func(n string) host.NewEvent {
		return host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(n), "row": abi.S("x")}}
	}
	a, err := h.Append(ctx, testlogic.Stream, "a", 0, add("1"))
	require.NoError(t, err)
	b, err := h.Append(ctx, testlogic.Stream, "b", 0, add("10"))
	require.NoError(t, err)
	stray := h.EventItem(abi.Event{Stream: testlogic.Stream, StreamID: "zz", Version: 2, Type: "Add",
		Data: abi.Item{"n": abi.N("1000"), "row": abi.S("x")}, Timestamp: "2026-11-29T12:00:00.000Z"})
	stray["pk"] = h.EventItem(a[0])["pk"]
	env.Put(t, events, stray)
	a3 := abi.Event{Stream: testlogic.Stream, StreamID: "a", Version: 3, Type: "Add",
		Data: abi.Item{"n": abi.N("100"), "row": abi.S("x")}, Timestamp: "2026-11-29T12:00:00.000Z"}
	env.Put(t, events, h.EventItem(a3))

	res, err := h.ProcessBatch(ctx, lambdaFile(t, h.EventItem(a[0]), h.EventItem(a3), h.EventItem(b[0])))
	require.NoError(t, err)
	out := res.Projections["ledger"].Rows
	require.Len(t, out, 1)
	require.NoError(t, out[0].Err, "the row does not fail: one instance did")
	require.True(t, out[0].Written)
	byID := map[string]host.Instance{}
	for _, in := range out[0].Instances {
		byID[in.StreamID] = in
	}
	require.Error(t, byID["a"].Err)
	assert.ErrorIs(t, byID["a"].Err, host.ErrEventItemKey)
	assert.Contains(t, byID["a"].Err.Error(), `streamId "zz"`)
	assert.NoError(t, byID["b"].Err)
	row := env.Get(t, rows, testlogic.RowKey("x"))
	assert.Equal(t, "10", row["total"].Str, "b's event only")
	_, hasA := row["checkpoints"].Map["Acct#a"]
	assert.False(t, hasA, "a's checkpoint stays where it was (none)")
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "100"}}, resp.BatchItemFailures, "a's earliest record")
}

// TestES7_RepairsAndCapturesRefuseAStrayItem: every path that reads g-1's
// events from the event store (capture, rebuild, catch-up, what-if) fails
// naming the item; none folds it, none writes the row.
func TestES7_RepairsAndCapturesRefuseAStrayItem(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	strayInTheMiddle(t, h, env, events)
	check := func(what string, err error) {
		t.Helper()
		require.Error(t, err, what)
		assert.ErrorIs(t, err, host.ErrEventItemKey, what)
		assert.Contains(t, err.Error(), `streamId "someone-else"`, what)
	}
	_, err := h.Capture(ctx, host.CaptureOptions{Stream: "Warehouse", StreamID: "g-1"})
	check("capture", err)
	_, err = h.Rebuild(ctx, "stock", "g-1")
	check("rebuild", err)
	_, err = h.CatchUp(ctx, "stock", "g-1")
	check("catch-up", err)
	_, err = h.RebuildInstance(ctx, "stock", host.InstanceRef{Source: "Warehouse", StreamID: "g-1"})
	check("rebuild of the instance", err)
	_, err = h.ReadStream(ctx, "Warehouse", "g-1", 0, 0)
	check("read", err)
	assert.Nil(t, stockRow(t, env, rows, "g-1"), "nothing written")
	assert.Nil(t, stockRow(t, env, rows, "someone-else"))
}

// TestES7_ScansOfTheEventStoreReportAStrayItemAndFoldNothingOfIt: the
// repairs that find stream instances by scanning the event table (a
// backfill, a rebuild by plugin version, a capture of every instance) meet
// the stray item of case 1. It names no instance: it is reported with both
// values, the other instances are still rebuilt, and no row is made of it.
func TestES7_ScansOfTheEventStoreReportAStrayItemAndFoldNothingOfIt(t *testing.T) {
	ctx := context.Background()
	h, env, events, rows := stockHost(t, "")
	evs, err := h.Append(ctx, "Warehouse", "g-1", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("1")}})
	require.NoError(t, err)
	res, err := h.ApplyEvents(ctx, "stock", evs...)
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	env.Put(t, events, strayItem(h, "g-idmismatch", "someone-else", 1, "3"))
	strayNamed := func(what string, err error) {
		t.Helper()
		require.Error(t, err, what)
		assert.ErrorIs(t, err, host.ErrEventItemKey, what)
		assert.Contains(t, err.Error(), `"$inventory#v1#warehouse#g-idmismatch"`, what)
		assert.Contains(t, err.Error(), `streamId "someone-else"`, what)
	}

	rep, err := backfill.Run(ctx, h, backfill.Options{Projection: "stock"})
	strayNamed("backfill", err)
	assert.ErrorIs(t, err, backfill.ErrFailed)
	assert.Equal(t, 1, rep.Streams, "g-1 only")
	require.Len(t, rep.Failed, 1)
	assert.Empty(t, rep.Failed[0].StreamID, "the item names no instance")

	wb, err := h.RebuildWrittenBy(ctx, "stock", "1.0.0", false)
	strayNamed("rebuild by plugin version", err)
	assert.Equal(t, []string{"g-1"}, wb.Streams)
	assert.Len(t, wb.Outcomes, 1)

	_, err = h.Capture(ctx, host.CaptureOptions{Stream: "Warehouse"})
	strayNamed("capture of every instance", err)

	assert.Equal(t, "1", stockRow(t, env, rows, "g-1")["qty"].Str)
	assert.Nil(t, stockRow(t, env, rows, "someone-else"))
	assert.Nil(t, stockRow(t, env, rows, "g-idmismatch"))
}
