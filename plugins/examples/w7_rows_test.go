//go:build !wasip1

package examples_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// orderHosts starts, on one ddblocal and one event store, a host per
// language whose order-summary projection writes its own table.
func orderHosts(t *testing.T) (*testenv.Env, map[string]*host.Host, map[string]string) {
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	hosts, tables := map[string]*host.Host{}, map[string]string{}
	for _, lang := range orderSummaryLangs {
		path := orderSummaryPath(t, lang)
		tables[lang] = env.Table(t, "orders-"+lang, false)
		cfg := &host.Config{
			EventStore: host.EventStoreConfig{Table: events, Schema: "shop", SchemaVersion: 1,
				Streams: []host.StreamConfig{{Name: ordersummary.Stream, Composite: []string{"orderId"},
					EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped", "OrderRefunded"}}}},
			Projections: []host.ProjectionConfig{{Name: "orders", Table: tables[lang], Plugin: path,
				Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}},
		}
		h, err := host.New(context.Background(), cfg, host.WithClient(env.Client))
		require.NoError(t, err, lang)
		t.Cleanup(func() { h.Close(context.Background()) })
		hosts[lang] = h
	}
	return env, hosts, tables
}

// orderHistory is order i's events from version from on: placed, items
// with prices that float arithmetic gets wrong, and some orders that fail
// (an unknown event, a price that is no number, a total of more than 38
// digits).
func orderHistory(i, from, to int) []host.NewEvent {
	prices := []string{"0.1", "0.2", "2.25", "1e-3", "12345678901234567.89", "-0.5", "1.5E2", "0.3333333333333333", "7"}
	var out []host.NewEvent
	for v := from; v <= to; v++ {
		var e host.NewEvent
		switch {
		case v == 1:
			e = host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(fmt.Sprintf("c-%d", i))}}
		case i == 3 && v == 5:
			e = host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}}
		case i == 4 && v == 4:
			e = host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("x"), "price": abi.S("12")}}
		case i == 5 && v >= 3:
			e = host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("big"), "price": abi.N("99999999999999999999999999999999999999")}}
		case v%7 == 0:
			e = host.NewEvent{Type: "OrderShipped", Data: abi.Item{}}
		default:
			e = host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S(fmt.Sprintf("s-%d", v)), "price": abi.N(prices[(i+v)%len(prices)])}}
		}
		out = append(out, e)
	}
	return out
}

// TestW7_GoRustAndCWriteTheSameRows folds the same captured batches
// through the engine with the Go, Rust and C order-summary plugins: a
// first capture delivered shuffled and with gaps (the engine reads the
// missing events from the event store), then more events, delivered
// shuffled with redeliveries of earlier records, then everything again.
// After every batch the rows' outcomes agree (applied versions, failures
// and their messages), and at the end the three tables hold identical
// items, exact decimal totals included.
func TestW7_GoRustAndCWriteTheSameRows(t *testing.T) {
	ctx := context.Background()
	env, hosts, tables := orderHosts(t)
	const orders = 8
	first := hosts["go"]
	appendUpTo := func(to int) {
		for i := 0; i < orders; i++ {
			id := fmt.Sprintf("o-%d", i)
			head := 0
			if to > 6 {
				head = 6
			}
			_, err := first.Append(ctx, ordersummary.Stream, id, uint64(head), orderHistory(i, head+1, to)...)
			require.NoError(t, err)
		}
	}
	capture := func() []host.Record {
		recs, err := first.Capture(ctx, host.CaptureOptions{Stream: ordersummary.Stream})
		require.NoError(t, err)
		return recs
	}
	r := rand.New(rand.NewPCG(7, 29))
	shuffle := func(recs []host.Record) []host.Record {
		out := append([]host.Record(nil), recs...)
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	var batches [][]host.Record
	appendUpTo(6)
	one := capture()
	// With gaps: two batches, each missing records the other holds.
	var a, b []host.Record
	for i, rec := range shuffle(one) {
		if i%3 == 0 {
			a = append(a, rec)
		} else {
			b = append(b, rec)
		}
	}
	batches = append(batches, a, b)
	appendUpTo(11)
	two := capture()
	// Shuffled, with earlier records delivered again.
	mixed := shuffle(append(append([]host.Record(nil), two[len(two)/2:]...), one[:len(one)/2]...))
	batches = append(batches, mixed[:len(mixed)/2], mixed[len(mixed)/2:], shuffle(two))

	seen := map[string]string{} // every outcome of the Go plugin's rows, joined
	for n, batch := range batches {
		outcomes := map[string]map[string]string{}
		for _, lang := range orderSummaryLangs {
			res, err := hosts[lang].ProcessBatch(ctx, batch)
			require.NoError(t, err, "%s batch %d", lang, n)
			outcomes[lang] = map[string]string{}
			for _, o := range res.Projections["orders"].Rows {
				var applied []uint64
				for _, in := range o.Instances {
					for _, e := range in.Applied {
						applied = append(applied, e.Version)
					}
				}
				desc := fmt.Sprintf("written %v applied %v", o.Written, applied)
				if o.Err != nil {
					desc += " failed: " + o.Err.Error()
				}
				outcomes[lang][o.Key["pk"].Str] = desc
			}
			outcomes[lang]["failed records"] = fmt.Sprint(res.Failed())
		}
		for _, lang := range orderSummaryLangs[1:] {
			assert.Equal(t, outcomes["go"], outcomes[lang], "batch %d: the %s plugin's outcomes differ from Go's", n, lang)
		}
		for k, v := range outcomes["go"] {
			seen[k] += v + "\n"
		}
	}
	// The failing orders failed for their reasons, in every language (the
	// outcomes agree): an unknown event, a price that is no number, a total
	// of more than 38 digits.
	for id, want := range map[string]string{"o-3": `UnknownEvent: order-summary does not fold "OrderRefunded"`,
		"o-4": "BadEvent: ItemAdded v4: price is not a number", "o-5": "BadTotal: ItemAdded v3: total decimal: more than 38 significant digits"} {
		assert.Contains(t, seen["OrderSummary#"+id], want, id)
	}

	rows := map[string][]abi.Item{}
	for _, lang := range orderSummaryLangs {
		for i := 0; i < orders; i++ {
			it := env.Get(t, tables[lang], ordersummary.RowKey(fmt.Sprintf("o-%d", i)))
			delete(it, "createdAt")
			rows[lang] = append(rows[lang], it)
		}
	}
	for _, lang := range orderSummaryLangs[1:] {
		for i := range rows["go"] {
			assert.True(t, abi.ItemsEqual(rows["go"][i], rows[lang][i]), "order o-%d:\ngo   %v\n%-4s %v", i, rows["go"][i], lang, rows[lang][i])
		}
	}
	// The rows hold what the events say, exactly: o-1 has prices 1e-3,
	// 12345678901234567.89, -0.5, 1.5E2, 0.3333333333333333 (v2–v6),
	// 0.1, 0.2, 2.25, 1e-3 (v8–v11) and shipped at v7.
	o1 := rows["go"][1]
	require.NotNil(t, o1)
	assert.Equal(t, "12345678901234720.2753333333333333", o1["total"].Str)
	assert.Equal(t, "9", o1["items"].Str)
	assert.Equal(t, "11", o1["version"].Str)
	assert.Equal(t, "shipped", o1["status"].Str)
	failsAt := map[int]int{3: 5, 4: 4, 5: 3}
	for i, it := range rows["go"] {
		if v, failing := failsAt[i]; failing {
			// the failing event is never applied: the row keeps what the
			// batches before it wrote, if any
			if it != nil {
				assert.Less(t, it["version"].Str, fmt.Sprint(v), "o-%d", i)
			}
			continue
		}
		require.NotNil(t, it, "o-%d", i)
		assert.Equal(t, "11", it["version"].Str, "o-%d", i)
	}
}
