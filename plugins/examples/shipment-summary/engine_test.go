//go:build !wasip1

package shipmentsummary_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

var ctx = context.Background()

// newHost runs the projection "shipments" natively and, when wasm is set,
// "shipments-wasm" through the Wasm module on wazero, each into its own
// table, over one event store.
func newHost(t *testing.T, wasm bool) *host.Host {
	t.Helper()
	env := testenv.Start(t)
	proj := func(name, plugin, table string) string {
		return fmt.Sprintf(`{"name": %q, "plugin": %q, "table": %q,
		  "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
		  "readModel": {"entityType": %q}, "removal": {}, "createdAt": "-",
		  "retry": {"attempts": 60}}`, name, plugin, table, shipmentsummary.EntityType)
	}
	projs := proj("shipments", "native:shipments", env.Table(t, "shipments", false))
	if wasm {
		projs += ", " + proj("shipments-wasm", wasmbuild.BuildPath(t, "wasm"), env.Table(t, "shipments_wasm", false))
	}
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "ship", "streams": [
	    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
	    {"name": "Weigh", "composite": ["sessionId"]}]},
	  "projections": [%s]}`, env.Table(t, "events", true), projs))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("shipments", logic.Native(guest.MustNew(shipmentsummary.Projection), "shipments")),
		host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

func add(t *testing.T, h *host.Host, stream, id, typ string, data abi.Item) abi.Event {
	t.Helper()
	head, err := h.Head(ctx, stream, id)
	require.NoError(t, err)
	evs, err := h.Append(ctx, stream, id, head, host.NewEvent{Type: typ, Data: data})
	require.NoError(t, err)
	return evs[0]
}

func parcels(sh string, n int) abi.Item {
	return abi.Item{"shipmentId": abi.S(sh), "parcels": abi.N(fmt.Sprint(n))}
}
func scanned(loc string) abi.Item { return abi.Item{"location": abi.S(loc)} }
func weighed(sh string, kg int) abi.Item {
	return abi.Item{"shipmentId": abi.S(sh), "kg": abi.N(fmt.Sprint(kg))}
}

func row(t *testing.T, h *host.Host, projection, sh string) abi.Item {
	t.Helper()
	it, _, err := h.Row(ctx, projection, shipmentsummary.RowKey(sh))
	require.NoError(t, err)
	return it
}

func TestM1_ShipmentSummaryUnderTheEngine(t *testing.T) {
	h := newHost(t, false)
	o1 := add(t, h, "Order", "o-1", "ParcelsAdded", parcels("sh-1", 2))
	s1 := add(t, h, "Scan", "sh-1", "Scanned", scanned("Oslo"))
	s2 := add(t, h, "Scan", "sh-1", "Scanned", scanned("Bergen"))
	tare := add(t, h, "Weigh", "w-1", "Weighed", weighed("sh-1", 0))
	w2 := add(t, h, "Weigh", "w-1", "Weighed", weighed("sh-1", 7))

	res, err := h.ApplyEvents(ctx, "shipments", w2, s1, tare, o1, s2)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	r := row(t, h, "shipments", "sh-1")
	assert.Equal(t, "2", r["parcels"].Str)
	assert.Equal(t, "Bergen", r["location"].Str, "only the newest scan")
	assert.Equal(t, "7", r["kg"].Str, "the tare reading is skipped")
	assert.Equal(t, "1", r["revision"].Str, "one write")
	for _, in := range o.Instances {
		switch in.Source {
		case "scan":
			assert.Len(t, in.Superseded, 1)
		case "weigh":
			require.Len(t, in.Skipped, 1)
			assert.Equal(t, uint64(1), in.Skipped[0].Version)
		}
	}

	// A tare reading alone writes nothing.
	tare2 := add(t, h, "Weigh", "w-2", "Weighed", weighed("sh-1", 0))
	res, err = h.ApplyEvents(ctx, "shipments", tare2)
	require.NoError(t, err)
	assert.False(t, res.Rows[0].Written)

	// OrderCancelled removes the row; a redelivery cannot bring it back, a
	// later event starts it again from initial.
	cancel := add(t, h, "Order", "o-1", "OrderCancelled", abi.Item{"shipmentId": abi.S("sh-1")})
	res, err = h.ApplyEvents(ctx, "shipments", cancel)
	require.NoError(t, err)
	assert.True(t, res.Rows[0].Removed)
	assert.Nil(t, row(t, h, "shipments", "sh-1"))
	res, err = h.ApplyEvents(ctx, "shipments", o1, s2, w2)
	require.NoError(t, err)
	assert.False(t, res.Rows[0].Written, "a redelivery is already applied")
	assert.Nil(t, row(t, h, "shipments", "sh-1"), "the tombstone is not resurrected")
	w3 := add(t, h, "Weigh", "w-1", "Weighed", weighed("sh-1", 3))
	_, err = h.ApplyEvents(ctx, "shipments", w3)
	require.NoError(t, err)
	r = row(t, h, "shipments", "sh-1")
	assert.Equal(t, "3", r["kg"].Str)
	assert.Equal(t, "0", r["parcels"].Str, "started again from initial")
}

// genEvents appends random events for shipments sh-0 … sh-(n-1): orders
// that may feed two shipments, one scan stream per shipment, weigh sessions
// with tare readings.
func genEvents(t *testing.T, h *host.Host, rng *rand.Rand, n int) []abi.Event {
	var all []abi.Event
	sh := func(i int) string { return fmt.Sprintf("sh-%d", i%n) }
	for i := range n {
		for k := range 1 + rng.IntN(2) {
			id := fmt.Sprintf("o-%d-%d", i, k)
			for range 1 + rng.IntN(4) {
				all = append(all, add(t, h, "Order", id, "ParcelsAdded", parcels(sh(i+rng.IntN(2)), 1+rng.IntN(5))))
			}
		}
		for range rng.IntN(5) {
			all = append(all, add(t, h, "Scan", sh(i), "Scanned", scanned(fmt.Sprintf("hub-%d", rng.IntN(100)))))
		}
		for k := range 1 + rng.IntN(2) {
			id := fmt.Sprintf("w-%d-%d", i, k)
			for range 1 + rng.IntN(3) {
				all = append(all, add(t, h, "Weigh", id, "Weighed", weighed(sh(i), rng.IntN(4))))
			}
		}
	}
	return all
}

// sequential is the sequential fold of a row's events in declaration order
// (sources, then stream id, then version), by the plugin itself.
func sequential(t *testing.T, sh string, all []abi.Event) abi.Item {
	order := map[string]int{"Order": 0, "Scan": 1, "Weigh": 2}
	p := guest.MustNew(shipmentsummary.Projection)
	var mine []abi.Event
	for _, ev := range all {
		k, err := p.Key(&abi.KeyRequest{Source: map[string]string{"Order": "order", "Scan": "scan", "Weigh": "weigh"}[ev.Stream], Events: []abi.Event{ev}})
		require.NoError(t, err)
		if k.Keys[0].Key != nil && k.Keys[0].Key["pk"].Str == "Shipment#"+sh {
			mine = append(mine, ev)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		a, b := mine[i], mine[j]
		if order[a.Stream] != order[b.Stream] {
			return order[a.Stream] < order[b.Stream]
		}
		if a.StreamID != b.StreamID {
			return a.StreamID < b.StreamID
		}
		return a.Version < b.Version
	})
	req := &abi.EvolveRequest{Key: shipmentsummary.RowKey(sh)}
	for _, ev := range mine {
		req.Events = append(req.Events, abi.SourcedEvent{Source: map[string]string{"Order": "order", "Scan": "scan", "Weigh": "weigh"}[ev.Stream], Event: ev})
	}
	if len(req.Events) == 0 {
		return nil
	}
	resp, err := p.Evolve(req)
	require.NoError(t, err)
	return resp.Item
}

// deliver sends every event at least once, some twice, shuffled, in random
// batches over 4 concurrent lanes, to each projection.
func deliver(t *testing.T, h *host.Host, rng *rand.Rand, all []abi.Event, projections ...string) {
	deliveries := append([]abi.Event(nil), all...)
	for _, ev := range all {
		if rng.IntN(4) == 0 {
			deliveries = append(deliveries, ev)
		}
	}
	rng.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	var batches [][]abi.Event
	for len(deliveries) > 0 {
		k := min(len(deliveries), 1+rng.IntN(12))
		batches = append(batches, deliveries[:k])
		deliveries = deliveries[k:]
	}
	next := make(chan []abi.Event)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				for _, p := range projections {
					res, err := h.ApplyEvents(ctx, p, b...)
					if assert.NoError(t, err) {
						for _, o := range res.Rows {
							assert.NoError(t, o.Err)
						}
					}
				}
			}
		}()
	}
	for _, b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()
}

func domain(it abi.Item) abi.Item {
	if it == nil {
		return nil
	}
	return abi.Item{"shipmentId": it["shipmentId"], "parcels": it["parcels"], "location": it["location"], "kg": it["kg"]}
}

// TestM1_ShipmentSummaryRandomInterleavingsEqualTheSequentialFold: random
// interleavings of the three sources over concurrent lanes, with
// redeliveries, give every row the sequential fold of its events, natively
// and through the Wasm module alike.
func TestM1_ShipmentSummaryRandomInterleavingsEqualTheSequentialFold(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			h := newHost(t, seed == 1)
			all := genEvents(t, h, rng, 6)
			projections := []string{"shipments"}
			if seed == 1 {
				projections = append(projections, "shipments-wasm")
			}
			deliver(t, h, rng, all, projections...)
			rows := 0
			for i := range 6 {
				sh := fmt.Sprintf("sh-%d", i)
				want := domain(sequential(t, sh, all))
				if want != nil {
					rows++
				}
				for _, p := range projections {
					got := row(t, h, p, sh)
					assert.True(t, abi.ItemsEqual(want, domain(got)), "%s %s:\nwant %v\ngot  %v", p, sh, want, domain(got))
				}
			}
			assert.Equal(t, 6, rows, "every shipment has an order, so every row exists")
		})
	}
}
