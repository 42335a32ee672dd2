package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/netenv"
	"github.com/dynafold/dynafold/internal/testlogic"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestY7_BatchRequestsAtTheFloorInDependencyOrder runs one batch of each
// shape of BenchmarkBatchRoundTrips with 5 ms of latency per request and
// checks, at the server, the requests by type (one BatchGetItem per 100
// rows that exist, none for new rows, one write per row and attempt, a gap
// read only where the batch lacks versions, the outbox's head read,
// delivery and delete per row with effects, and nothing else) and the
// order of dependent calls: no write, outbox read or gap read of a row
// before its read is answered (a new row's first write needs none), no
// effect delivered before its row's write committed, no effect deleted
// before it was delivered.
func TestY7_BatchRequestsAtTheFloorInDependencyOrder(t *testing.T) {
	want := map[string]map[string]int{
		"contiguous/rows=10":  {"PutItem": 10},
		"contiguous/rows=100": {"PutItem": 100},
		"existing/rows=10":    {"BatchGetItem": 1, "PutItem": 10},
		"existing/rows=100":   {"BatchGetItem": 1, "PutItem": 100},
		// the 20 redelivered first events: a write from initial that
		// fails its condition, then the row's read; already applied
		"shuffled/rows=100":       {"BatchGetItem": 1, "PutItem": 100, "GetItem": 20},
		"gaps/rows=10":            {"BatchGetItem": 1, "PutItem": 10, "Query": 10},
		"outbox/rows=20":          {"TransactWriteItems": 20, "Query": 20, "Deliver": 20, "DeleteItem": 20},
		"multisource/instances=3": {"PutItem": 20},
		"lostrace/rows=10":        {"PutItem": 11, "GetItem": 1},
	}
	for _, s := range rttShapes() {
		t.Run(s.name, func(t *testing.T) {
			n := netenv.Start(t)
			h := s.host(t, n)
			recs := s.batch(t, h, n, 0)
			n.SetLatency(rttLatency)
			if s.faults != nil {
				n.SetFaults(*s.faults)
			}
			n.Reset()
			res, err := h.ProcessBatch(context.Background(), recs)
			n.SetLatency(0)
			require.NoError(t, err)
			require.Empty(t, res.Failed())
			if s.check != nil {
				s.check(t, res)
			}
			assert.Equal(t, want[s.name], n.Counts(), "requests by type")
			checkDependencyOrder(t, n.Requests(), newRowIn(recs))
		})
	}
}

// newRowIn returns whether a row key (pk) is of a row the batch recs
// brings version 1 of: every row of such a stream, as the shapes' rows
// are "<entity>#<streamId>" (the shipments' too: their instances share
// the shipment's id). A new row may be written before any read.
func newRowIn(recs []host.Record) func(pk string) bool {
	first := map[string]bool{}
	for _, r := range recs {
		img := r.DynamoDB.NewImage
		if img["version"].Str == "1" {
			first[img["streamId"].Str] = true
		}
	}
	return func(pk string) bool {
		_, id, _ := strings.Cut(pk, "#")
		return first[id]
	}
}

// noNewRow: every row of the batch exists.
func noNewRow(string) bool { return false }

// checkDependencyOrder checks the order of a batch's dependent requests
// (see TestY7_BatchRequestsAtTheFloorInDependencyOrder). Rows are told
// apart by pk; the event table's requests by its name.
func checkDependencyOrder(t *testing.T, reqs []netenv.Request, newRow func(pk string) bool) {
	t.Helper()
	events := func(r netenv.Request) bool { return strings.HasPrefix(r.Table, "events-") }
	var reads, writes, deliveries []netenv.Request
	var firstRead *netenv.Request
	for i, r := range reqs {
		switch {
		case r.Op == "BatchGetItem" || r.Op == "GetItem":
			reads = append(reads, r)
			if firstRead == nil {
				firstRead = &reqs[i]
			}
		case (r.Op == "PutItem" || r.Op == "TransactWriteItems") && !events(r):
			writes = append(writes, r)
		case r.Op == "Deliver":
			deliveries = append(deliveries, r)
		}
	}
	// answered returns whether a request of list touching pk was answered
	// before r was sent, and that none was still in flight.
	answered := func(list []netenv.Request, pk string, r netenv.Request, committed bool) bool {
		ok := false
		for _, p := range list {
			if !netenv.Touches(p.Keys, pk) || (committed && p.Err) {
				continue
			}
			if p.Start < r.Start && p.End > r.Start {
				return false
			}
			ok = ok || p.End < r.Start
		}
		return ok
	}
	// unread returns whether no read of pk was sent before r: a new row,
	// written without one.
	unread := func(pk string, r netenv.Request) bool {
		for _, p := range reads {
			if netenv.Touches(p.Keys, pk) && p.Start < r.Start {
				return false
			}
		}
		return true
	}
	for _, r := range reqs {
		switch {
		case r.Op == "Query" && events(r):
			require.NotNil(t, firstRead, "a gap read in a batch without a row read")
			assert.Less(t, firstRead.End, r.Start, "a gap read sent before the rows' read was answered")
		case r.Op == "Query", r.Op == "PutItem", r.Op == "TransactWriteItems":
			for _, pk := range r.Keys {
				if unread(pk, r) && newRow(pk) {
					continue // a new row's first write, and its outbox's read beside it
				}
				assert.True(t, answered(reads, pk, r, false), "%s of row %s sent before its read was answered", r.Op, pk)
			}
		case r.Op == "Deliver":
			for _, pk := range r.Keys {
				assert.True(t, answered(writes, pk, r, true), "an effect of row %s delivered before its write committed", pk)
			}
		case r.Op == "DeleteItem":
			for _, pk := range r.Keys {
				assert.True(t, answered(deliveries, pk, r, true), "an effect of row %s deleted before a delivery", pk)
			}
		}
	}
}

// A batch's rows are written all at once, not in waves: a gate holds every
// write until all 100 have arrived. And a batch of more than 100 rows
// that exist reads them with one BatchGetItem per 100, all sent at once.
func TestY7_EveryRowOfABatchWritesAtOnce(t *testing.T) {
	n := netenv.Start(t)
	h := rttOrderHost(t, n)
	ctx := context.Background()

	recs := appendOrders(t, h, "w", 100, 1)
	n.SetLatency(rttLatency)
	g := n.SetGate(netenv.Op("PutItem"), netenv.Op("PutItem"), 100)
	res, err := h.ProcessBatch(ctx, recs)
	n.ClearHook()
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "only %d of the batch's 100 writes were in flight at once", g.Arrived())

	recs = existingBatch(t, h, "r", 250, 1)
	n.Reset()
	g = n.SetGate(netenv.Op("BatchGetItem"), netenv.Op("BatchGetItem"), 3)
	res, err = h.ProcessBatch(ctx, recs)
	n.ClearHook()
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "%d of the 3 reads of 250 rows were in flight at once", g.Arrived())
	assert.Equal(t, 3, n.Counts()["BatchGetItem"])
	assert.Equal(t, 250, n.Counts()["PutItem"])
}

// A row fed by two instances that both lack versions reads both gaps at
// once: a gate holds each gap read until both have arrived.
func TestY7_GapReadsOfARowsInstancesAtOnce(t *testing.T) {
	n := netenv.Start(t)
	h := rttShipmentHost(t, n)
	ctx := context.Background()
	shipment := abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("1"), "kg": abi.N("2")}
	app := func(stream, id string, es ...host.NewEvent) []abi.Event {
		out, err := h.Append(ctx, stream, id, 0, es...)
		require.NoError(t, err)
		return out
	}
	order := app("Order", "o-1", host.NewEvent{Type: "ParcelsAdded", Data: shipment}, host.NewEvent{Type: "ParcelsAdded", Data: shipment},
		host.NewEvent{Type: "ParcelsAdded", Data: shipment})
	weigh := app("Weigh", "w-1", host.NewEvent{Type: "Weighed", Data: shipment}, host.NewEvent{Type: "Weighed", Data: shipment})
	scan := app("Scan", "sh-1", host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S("Oslo")}})

	n.SetLatency(rttLatency)
	g := n.SetGate(netenv.Op("Query"), netenv.Op("Query"), 2)
	res, err := h.ProcessBatch(ctx, records(h, []abi.Event{order[2], weigh[1], scan[0]}))
	n.ClearHook()
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "%d of the row's 2 gap reads were in flight at once", g.Arrived())
	row, _, err := h.Row(ctx, "shipments", abi.Item{"pk": abi.S("Shipment#sh-1"), "sk": abi.S("S")})
	require.NoError(t, err)
	assert.Equal(t, "3", row["parcels"].Str, "the order's gap was filled")
	assert.Equal(t, "4", row["kg"].Str, "the weighing's gap was filled")
}

// The first retry after a lost race goes at once: with a retry base of an
// hour, a batch whose write loses one race (forced by ddblocal) still
// completes its row within the test's deadline, on the second attempt.
// The rows exist, so they are read first (a new row's write from initial
// that fails its condition is followed by its read at once by design).
func TestY7_ALostRaceRetriesAtOnce(t *testing.T) {
	n := netenv.Start(t)
	h := rttOrderHostWith(t, n, `, "retry": {"base": "1h", "max": "1h"}`)
	recs := existingBatch(t, h, "lr", 2, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n.SetLatency(rttLatency)
	n.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "PutItem", Code: "ConditionalCheckFailedException"}}})
	n.Reset()
	res, err := h.ProcessBatch(ctx, recs)
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed(), "the row that lost its race waited for the back-off")
	attempts := 0
	for _, o := range res.Projections["summaries"].Rows {
		attempts += o.Attempts
	}
	assert.Equal(t, 3, attempts, "one lost race, retried once")
	assert.Equal(t, map[string]int{"BatchGetItem": 1, "PutItem": 3, "GetItem": 1}, n.Counts())
}

// outboxRow appends k events (of which every fifth carries an effect) to
// a ledger row from version from+1 and returns their records.
func outboxRow(t *testing.T, h *host.Host, id string, from uint64, k int) []host.Record {
	t.Helper()
	var es []host.NewEvent
	for i := range k {
		es = append(es, add(i+1))
	}
	evs, err := h.Append(context.Background(), testlogic.Stream, id, from, es...)
	require.NoError(t, err)
	return records(h, evs)
}

// A row's effects go out beside its write: the read of the row's outbox
// head is sent with the write (a gate holds the write until it arrives),
// and the delete of a delivered effect with the next delivery (a gate
// holds the first delete until the second delivery arrives); the effects
// arrive in order.
func TestY7_EffectsGoOutBesideTheWrite(t *testing.T) {
	n := netenv.Start(t)
	h := rttOutboxHost(t, n)
	ctx := context.Background()
	pk := testlogic.RowKey("ob-1")["pk"].Str

	recs := outboxRow(t, h, "ob-1", 0, 5)
	n.SetLatency(rttLatency)
	g := n.SetGate(netenv.OpOn("TransactWriteItems", pk), netenv.OpOn("Query", pk), 1)
	res, err := h.ProcessBatch(ctx, recs)
	n.ClearHook()
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "the outbox head was not read beside the write")

	recs = outboxRow(t, h, "ob-1", 5, 10) // versions 10 and 15 carry effects
	n.Reset()
	g = n.SetGate(netenv.OpOn("DeleteItem", pk), netenv.OpOn("Deliver", pk), 2)
	res, err = h.ProcessBatch(ctx, recs)
	n.ClearHook()
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "the first effect's delete did not overlap the second delivery")
	assert.Equal(t, []string{pk + " v10.0", pk + " v15.0"}, netenv.Delivered(n.Requests()))
	assert.Equal(t, 2, res.Projections["ledger"].Rows[0].Delivered)
	assert.Zero(t, n.Counts()["UpdateItem"], "the write's effects are claimed by the write")
}

// A write that finds older effects of its row still pending delivers them
// first, then its own.
func TestY7_OlderPendingEffectsGoFirst(t *testing.T) {
	n := netenv.Start(t)
	h := rttOutboxHost(t, n)
	ctx := context.Background()
	pk := testlogic.RowKey("ob-2")["pk"].Str

	n.WebhookDown.Store(true)
	res, err := h.ProcessBatch(ctx, outboxRow(t, h, "ob-2", 0, 5))
	require.NoError(t, err)
	require.Empty(t, res.Failed(), "a failed delivery fails no record")
	require.Equal(t, 1, res.Projections["ledger"].Rows[0].Undelivered)

	n.WebhookDown.Store(false)
	res = processAtLatency(t, n, h, outboxRow(t, h, "ob-2", 5, 5))
	assert.Equal(t, []string{pk + " v5.0", pk + " v10.0"}, netenv.Delivered(n.Requests()))
	assert.Equal(t, 2, res.Projections["ledger"].Rows[0].Delivered)
	checkDependencyOrder(t, n.Requests(), noNewRow)
}

// A lane whose write finds the row's effects being delivered by another
// lane hands the row over to it: the first lane delivers the second's
// effect after its own, in order, once each, and leaves nothing pending.
func TestY7_ALaneHandsItsEffectsToTheLaneDeliveringTheRow(t *testing.T) {
	n := netenv.Start(t)
	h := rttOutboxHost(t, n)
	ctx := context.Background()
	key := testlogic.RowKey("ob-3")
	pk := key["pk"].Str

	first := outboxRow(t, h, "ob-3", 0, 5)
	second := outboxRow(t, h, "ob-3", 5, 5)
	var lane2 *host.Result
	var lane2Err error
	var once atomic.Bool
	hook := func(op string, body []byte) {
		if op != "Deliver" || once.Swap(true) {
			return
		}
		// The first lane is delivering v5: the second lane writes v6-v10
		// meanwhile.
		lane2, lane2Err = h.ProcessBatch(ctx, second)
	}
	n.SetHook(hook)
	n.SetLatency(rttLatency)
	lane1, err := h.ProcessBatch(ctx, first)
	n.ClearHook()
	n.SetLatency(0)
	require.NoError(t, err)
	require.NoError(t, lane2Err)
	require.Empty(t, lane1.Failed())
	require.Empty(t, lane2.Failed())
	assert.Equal(t, 0, lane2.Projections["ledger"].Rows[0].Delivered, "the second lane handed its effect over")
	assert.Equal(t, 2, lane1.Projections["ledger"].Rows[0].Delivered, "the first lane delivered both")
	assert.Equal(t, []string{pk + " v5.0", pk + " v10.0"}, netenv.Delivered(n.Requests()))
	rep, err := h.Drain(ctx, "ledger", key, nil)
	require.NoError(t, err)
	assert.Empty(t, rep.Delivered, "nothing left pending")
	assert.False(t, rep.Busy)
}

// The projections of a batch apply it at once: with two projections of
// one stream, a gate holds each one's write until both have arrived.
func TestY7_ProjectionsOfABatchApplyAtOnce(t *testing.T) {
	n := netenv.Start(t)
	p, err := guest.New(ordersummary.Projection)
	require.NoError(t, err)
	proj := func(name string) string {
		return fmt.Sprintf(`{"name": %q, "plugin": "native:order-summary", "table": %q, "checkpoint": {"field": %q}}`,
			name, n.Table(t, name, false), ordersummary.Checkpoint)
	}
	h := rttHost(t, n, fmt.Sprintf(`{
	  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
	  "projections": [%s, %s]}`, n.Table(t, "events", true), proj("first"), proj("second")),
		host.WithNative("order-summary", logic.Native(p, "order-summary")))
	recs := appendOrders(t, h, "p", 1, 3)
	n.SetLatency(rttLatency)
	g := n.SetGate(netenv.Op("PutItem"), netenv.Op("PutItem"), 2)
	res, err := h.ProcessBatch(context.Background(), recs)
	n.ClearHook()
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.True(t, g.Opened(), "%d of the 2 projections' writes were in flight at once", g.Arrived())
	for _, name := range []string{"first", "second"} {
		require.Len(t, res.Projections[name].Rows, 1, name)
		assert.True(t, res.Projections[name].Rows[0].Written, name)
	}
}

// A write's effects whose claim runs short before their delivery (here
// claimFor is 1 ms, less than a round trip) go out through the ordinary
// drain instead: released, claimed anew, delivered in order, nothing left.
func TestY7_EffectsWhoseClaimRunsShortGoThroughTheDrain(t *testing.T) {
	n := netenv.Start(t)
	h := rttOutboxHostWith(t, n, `, "claimFor": "1ms"`)
	ctx := context.Background()
	key := testlogic.RowKey("ob-4")
	pk := key["pk"].Str

	res := processAtLatency(t, n, h, outboxRow(t, h, "ob-4", 0, 10)) // versions 5 and 10 carry effects
	assert.Equal(t, []string{pk + " v5.0", pk + " v10.0"}, netenv.Delivered(n.Requests()))
	assert.Equal(t, 2, res.Projections["ledger"].Rows[0].Delivered)
	assert.Equal(t, 4, n.Counts()["UpdateItem"], "the write's two claims released, two claimed anew")
	rep, err := h.Drain(ctx, "ledger", key, nil)
	require.NoError(t, err)
	assert.Empty(t, rep.Delivered, "nothing left pending")
}

// readNewRows reads every row first, new rows too: a batch of new orders
// costs its BatchGetItem again.
func TestY7_ReadNewRowsReadsNewRowsFirst(t *testing.T) {
	n := netenv.Start(t)
	h := rttOrderHostWith(t, n, `, "readNewRows": true`)
	recs := appendOrders(t, h, "rn", 10, 2)
	n.Reset()
	res, err := h.ProcessBatch(context.Background(), recs)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	assert.Equal(t, map[string]int{"BatchGetItem": 1, "PutItem": 10}, n.Counts())
	checkDependencyOrder(t, n.Requests(), noNewRow)
}

// processAtLatency processes recs with rttLatency per request, the
// environment's log reset first, and requires that no record failed.
func processAtLatency(t *testing.T, n *netenv.Env, h *host.Host, recs []host.Record) *host.Result {
	t.Helper()
	n.SetLatency(rttLatency)
	n.Reset()
	res, err := h.ProcessBatch(context.Background(), recs)
	n.SetLatency(0)
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	return res
}

// rttShape returns the shape of BenchmarkBatchRoundTrips named name.
func rttShapeNamed(t *testing.T, name string) rttShape {
	for _, s := range rttShapes() {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no shape %s", name)
	return rttShape{}
}

// Rows whose batch begins above version 1 need a gap read when their
// checkpoint is below. Once such rows have needed them, their gap reads go
// beside the rows' read, not after it: the second batch of the gaps shape
// sends every Query before the BatchGetItem is answered, and folds the same
// rows. Rows that follow their streams (the batch begins where the row
// stopped) need none: after a batch of those, the reads ahead stop.
func TestY7_GapReadsGoBesideTheRowReadWhileRowsNeedThem(t *testing.T) {
	n := netenv.Start(t)
	s := rttShapeNamed(t, "gaps/rows=10")
	h := s.host(t, n)
	ctx := context.Background()
	run := func(recs []host.Record) []netenv.Request {
		t.Helper()
		processAtLatency(t, n, h, recs)
		return n.Requests()
	}
	readAnswered := func(reqs []netenv.Request) (read netenv.Request, queriesBefore, queries int) {
		for _, r := range reqs {
			if r.Op == "BatchGetItem" {
				read = r
			}
		}
		for _, r := range reqs {
			if r.Op == "Query" {
				queries++
				if r.Start < read.End {
					queriesBefore++
				}
			}
		}
		return read, queriesBefore, queries
	}

	_, before, queries := readAnswered(run(s.batch(t, h, n, 0)))
	assert.Equal(t, 10, queries)
	assert.Zero(t, before, "the first rows with gaps read them after their row")

	// the next batch's read is held until its 10 gap reads have arrived:
	// they never would if they waited for its answer (the gate times out)
	recs := s.batch(t, h, n, 1)
	g := n.SetGate(netenv.Op("BatchGetItem"), netenv.Op("Query"), 10)
	processAtLatency(t, n, h, recs)
	n.ClearHook()
	assert.True(t, g.Opened(), "%d of the 10 gap reads went beside the rows' read", g.Arrived())
	assert.Equal(t, map[string]int{"BatchGetItem": 1, "Query": 10, "PutItem": 10}, n.Counts())
	for r := range 10 {
		row, _, err := h.Row(ctx, "summaries", abi.Item{"pk": abi.S(fmt.Sprintf("OrderSummary#g10-1-%d", r)), "sk": abi.S("OrderSummary")})
		require.NoError(t, err)
		assert.Equal(t, "15", row[ordersummary.Checkpoint].Str, "every version folded")
		assert.Equal(t, "14", row["items"].Str, "the 14 items of versions 2-15, the gap's too")
	}

	// Rows that follow their streams: the gap reads ahead are not needed,
	// and stop.
	for i := range 2 {
		run(existingBatch(t, h, fmt.Sprintf("f%d", i), 10, 3))
	}
	run(existingBatch(t, h, "last", 10, 3))
	assert.Zero(t, n.Counts()["Query"], "no read ahead once they were not needed")
}
