package swap_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

const writtenBy = "writtenBy"

// orders is an event store of Order streams, a read-model table and an
// engine folding the first into the second through a Swapper.
type orders struct {
	env    *testenv.Env
	es     *eventstore.Store
	stream eventstore.Stream
	table  string
	rec    *recorder
	engine *apply.Engine
}

func newOrders(t testing.TB, s *swap.Swapper) *orders {
	t.Helper()
	env := testenv.Start(t)
	es, err := eventstore.New(dynamo.New(env.Client), env.Table(t, "events", true), eventstore.DefaultLayout("test", 1))
	if err != nil {
		t.Fatal(err)
	}
	o := &orders{env: env, es: es, stream: eventstore.Stream{Name: "Order", Composite: []string{"orderId"}},
		table: env.Table(t, "orders", false)}
	o.rec = &recorder{DB: dynamo.New(env.Client)}
	o.engine, err = apply.New(apply.Projection{
		Name: "orders", Table: o.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: "Order", Stream: "Order"}},
		Checkpoint: apply.Checkpoint{Field: "version"}, CreatedAt: "createdAt",
		Logic: s, Rows: 16,
	}, o.rec, o)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// ReadFrom implements apply.EventReader.
func (o *orders) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	return o.es.ReadFrom(ctx, o.stream, streamID, after, to)
}

// next appends order id's next event (OrderPlaced first, then ItemAdded).
func (o *orders) next(ctx context.Context, id string, head uint64) (abi.Event, error) {
	ne := eventstore.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("2.5")}}
	if head == 0 {
		ne = eventstore.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c-1")}}
	}
	evs, err := o.es.Append(ctx, o.stream, id, head, ne)
	if err != nil {
		return abi.Event{}, err
	}
	return evs[0], nil
}

// recorder passes every call to the real DB and records the items written.
type recorder struct {
	store.DB
	mu   sync.Mutex
	puts []put
}

type put struct {
	item       abi.Item
	afterFinal bool // the batch started after the last swap
}

type afterFinalKey struct{}

func (r *recorder) PutItem(ctx context.Context, p store.Put) error {
	err := r.DB.PutItem(ctx, p)
	if err == nil {
		after, _ := ctx.Value(afterFinalKey{}).(bool)
		r.mu.Lock()
		r.puts = append(r.puts, put{item: abi.CloneItem(p.Item), afterFinal: after})
		r.mu.Unlock()
	}
	return err
}

// TestH3_SwapUnderLoad: lanes keep applying batches while the plugin is
// swapped ten times between two versions, and three broken modules are
// refused half way. No call fails, every row written
// records the one version that computed it (its content agrees: v2 rows carry
// model = 2), and after the last swap every new write carries that version.
func TestH3_SwapUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	ctx := context.Background()
	s := newSwapper(t, v1, swap.Config{WrittenBy: writtenBy, Plugin: pluginConfig()})
	o := newOrders(t, s)
	const lanes, perLane = 8, 2
	var (
		stop       atomic.Bool
		final      atomic.Bool
		batches    [lanes]atomic.Int64
		wg         sync.WaitGroup
		errMu      sync.Mutex
		errs       []error
		heads      [lanes][perLane]uint64
		candidates = []swap.Candidate{candidate(t, v1), candidate(t, v2)}
	)
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
		stop.Store(true)
	}
	for l := 0; l < lanes; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				k := n % perLane
				id := fmt.Sprintf("o-%d-%d", l, k)
				ev, err := o.next(ctx, id, heads[l][k])
				if err != nil {
					fail(err)
					return
				}
				heads[l][k] = ev.Version
				bctx := context.WithValue(ctx, afterFinalKey{}, final.Load())
				res := o.engine.ApplyBatch(bctx, []apply.Input{{Source: "Order", Event: ev, Pos: 0}})
				if len(res.Rows) != 1 || res.Rows[0].Failed() || !res.Rows[0].Written {
					fail(fmt.Errorf("lane %d %s v%d: %+v", l, id, ev.Version, res.Rows))
					return
				}
				batches[l].Add(1)
			}
		}()
	}
	// Every lane makes progress on each version before the next swap.
	progress := func() {
		var base [lanes]int64
		for l := range base {
			base[l] = batches[l].Load()
		}
		waitFor(t, "every lane to apply a batch", func() bool {
			for l := range base {
				if batches[l].Load() < base[l]+2 && !stop.Load() {
					return false
				}
			}
			return true
		})
	}
	progress()
	for i := 1; i <= 10; i++ {
		c := candidates[i%2]
		if _, changed, err := s.Offer(ctx, c); err != nil || !changed {
			t.Fatalf("swap %d: changed %v, %v", i, changed, err)
		}
		if i == 10 {
			final.Store(true)
		}
		progress()
		if i == 5 { // broken modules offered under load leave the current one serving
			serving := s.Current().Plugin
			for _, bad := range []string{badABI, v2trap, wrongStream} {
				if _, changed, err := s.Offer(ctx, candidate(t, bad)); changed || err == nil {
					t.Fatalf("%s under load: changed %v, %v", bad, changed, err)
				}
				if got := s.Current().Plugin; got != serving {
					t.Fatalf("%s replaced %s by %s", bad, serving, got)
				}
			}
			progress()
		}
	}
	stop.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d failures under load, first: %v", len(errs), errs[0])
	}
	last := s.Current().Plugin
	if st := s.Stats(); st.Swaps != 10 || st.Failed != 3 || last != "order-summary@1.0.0" {
		t.Fatalf("after 10 swaps: %+v, serving %s", st, last)
	}
	waitFor(t, "every old version retired", func() bool { return s.Stats().Retired == 10 })

	by := map[string]int{}
	afterFinal := 0
	o.rec.mu.Lock()
	defer o.rec.mu.Unlock()
	for _, p := range o.rec.puts {
		w := p.item[writtenBy].Str
		by[w]++
		switch {
		case w == "order-summary@2.0.0" && model(p.item) != "2",
			w == "order-summary@1.0.0" && model(p.item) != "":
			t.Errorf("row %v written by %s has model %q", p.item["pk"], w, model(p.item))
		case w != "order-summary@2.0.0" && w != "order-summary@1.0.0":
			t.Errorf("row %v written by %q", p.item["pk"], w)
		}
		if p.afterFinal {
			afterFinal++
			if w != last {
				t.Errorf("row %v written after the last swap by %s, not %s", p.item["pk"], w, last)
			}
		}
	}
	t.Logf("%d writes: %v; %d after the last swap", len(o.rec.puts), by, afterFinal)
	if by["order-summary@2.0.0"] == 0 || by["order-summary@1.0.0"] == 0 || afterFinal < lanes {
		t.Errorf("writes by version %v, %d after the last swap: the load did not span the swaps", by, afterFinal)
	}
	// Both versions fold alike: each row counts its items exactly.
	for l := 0; l < lanes; l++ {
		for k := 0; k < perLane; k++ {
			id := fmt.Sprintf("o-%d-%d", l, k)
			it, err := dynamo.New(o.env.Client).GetItem(ctx, o.table, ordersummary.RowKey(id))
			if err != nil || it == nil {
				t.Fatalf("row %s: %v", id, err)
			}
			if want := fmt.Sprint(max(heads[l][k], 1) - 1); it["items"].Str != want || it["version"].Str != fmt.Sprint(heads[l][k]) {
				t.Errorf("row %s: items %v version %v, want %s and %d", id, it["items"], it["version"], want, heads[l][k])
			}
			if it[writtenBy].Str != last {
				t.Errorf("row %s last written by %s", id, it[writtenBy].Str)
			}
		}
	}
}
