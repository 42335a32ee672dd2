package apply_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// threeSources is a projection logic with sources order, scan (latest
// mode) and weigh over the test stream, whose fold does not depend on how
// the instances interleave: order and weigh add n to total and keep a log
// of applied versions per instance; scan sets scan_<id> = n (each scan
// carries the whole part). Close (order only) removes the row. Flaky adds
// n like Add, but, when flaky is set, its evolve fails the first two times
// it is tried (an instance failure that a redelivery gets past).
type threeSources struct {
	ledger   testlogic.Ledger // for Key
	onEvolve func()
	mu       sync.Mutex
	flaky    map[string]int // tries so far, by "<streamId>/<version>"; nil: Flaky never fails
}

// fails reports whether this try of a Flaky event fails.
func (l *threeSources) fails(ev abi.Event) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flaky == nil {
		return false
	}
	k := fmt.Sprint(ev.StreamID, "/", ev.Version)
	l.flaky[k]++
	return l.flaky[k] <= 2
}

func (l *threeSources) Describe() abi.Description {
	d := l.ledger.Describe()
	d.Name, d.Sources = "three", []abi.SourceDesc{
		{Name: "order", Stream: testlogic.Stream, Mode: abi.ModeFold},
		{Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest},
		{Name: "weigh", Stream: testlogic.Stream, Mode: abi.ModeFold}}
	return d
}

func (l *threeSources) Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	return l.ledger.Key(ctx, req)
}

func (l *threeSources) Close(context.Context) error { return nil }

func (l *threeSources) Evolve(_ context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	if l.onEvolve != nil {
		l.onEvolve()
	}
	state, removed := req.State, false
	resp := &abi.EvolveResponse{}
	for _, se := range req.Events {
		ev := se.Event
		switch ev.Type {
		case "Close":
			state, removed = nil, true
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied, Remove: true})
			continue
		case "Skip":
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Skipped})
			continue
		case "Reject":
			resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Rejected, Error: &abi.Error{Tag: "Rejected", Message: "no"}})
			continue
		case "Flaky":
			if l.fails(ev) {
				resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Failed, Error: &abi.Error{Tag: "Flaky", Message: "not yet"}})
				return resp, nil
			}
		}
		next := abi.Item{"total": abi.N("0")}
		if state != nil {
			next = abi.CloneItem(state)
		}
		n, _ := strconv.ParseInt(ev.Data["n"].Str, 10, 64)
		if se.Source == "scan" {
			next["scan_"+ev.StreamID] = abi.N(fmt.Sprint(n))
		} else {
			t, _ := strconv.ParseInt(next["total"].Str, 10, 64)
			next["total"] = abi.N(fmt.Sprint(t + n))
			k := "log_" + se.Source + "_" + ev.StreamID
			next[k] = abi.S(strings.TrimPrefix(next[k].Str+","+fmt.Sprint(ev.Version), ","))
		}
		state, removed = next, false
		resp.Decisions = append(resp.Decisions, abi.Decision{Outcome: abi.Applied})
	}
	resp.State, resp.Removed, resp.Item = state, removed, state
	return resp, nil
}

// sourceOf routes a stream id to its source: o… order, s… scan, w… weigh.
func sourceOf(streamID string) string {
	return map[byte]string{'o': "order", 's': "scan", 'w': "weigh"}[streamID[0]]
}

func routed(evs []abi.Event) []apply.Input {
	out := make([]apply.Input, len(evs))
	for i, ev := range evs {
		out[i] = apply.Input{Source: sourceOf(ev.StreamID), Event: ev, Pos: i}
	}
	return out
}

// sequentialFold folds a row's events in declaration order (sources, then
// stream id, then version) in one call.
func sequentialFold(l *threeSources, row string, all []abi.Event) abi.Item {
	rank := map[string]int{"order": 0, "scan": 1, "weigh": 2}
	var mine []abi.Event
	for _, ev := range all {
		if rowOf(ev) == row {
			mine = append(mine, ev)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		a, b := mine[i], mine[j]
		if ra, rb := rank[sourceOf(a.StreamID)], rank[sourceOf(b.StreamID)]; ra != rb {
			return ra < rb
		}
		if a.StreamID != b.StreamID {
			return a.StreamID < b.StreamID
		}
		return a.Version < b.Version
	})
	req := &abi.EvolveRequest{}
	for _, ev := range mine {
		req.Events = append(req.Events, abi.SourcedEvent{Source: sourceOf(ev.StreamID), Event: ev})
	}
	resp, _ := (&threeSources{}).Evolve(ctx, req)
	return resp.State
}

// domainOf keeps a row's domain attributes.
func domainOf(it abi.Item) abi.Item {
	if it == nil {
		return nil
	}
	out := abi.Item{}
	for k, v := range it {
		if k == "total" || strings.HasPrefix(k, "log_") || strings.HasPrefix(k, "scan_") {
			out[k] = v
		}
	}
	return out
}

// TestM1_PropertyThreeSourcesOneRowWithFaults delivers three sources' random
// streams into two rows over concurrent lanes, shuffled and redelivered,
// with throttling, server errors and lost races injected, a latest-mode
// source among them: every row equals the sequential fold of its events in
// declaration order, and no event is applied twice. Then a row is removed,
// and redelivering everything never brings it back.
//
// The weigh source keeps its checkpoint in a field of its own with an
// instance field (the others in the map), so its instances race to adopt
// it: w0 only ever skips and must never adopt it (nor get a map entry), and
// the owner must be an instance that applied or rejected an event of the
// row. Flaky events fail their instance twice before they fold: the other
// instances of the row are written meanwhile.
func TestM1_PropertyThreeSourcesOneRowWithFaults(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			f := newFixture(t)
			logic := &threeSources{flaky: map[string]int{}}
			e, err := apply.New(apply.Projection{Name: "three", Table: f.table, KeyAttrs: []string{"pk", "sk"},
				Sources: []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest}, {Name: "weigh", Stream: testlogic.Stream}},
				Checkpoint: apply.Checkpoint{Field: "orderVersion", InstanceField: "orderId", Map: "checkpoints", Sources: map[string]apply.Scalar{
					"weigh": {Field: "weighVersion", Offset: -1, InstanceField: "weighSession"}}},
				Revision: &apply.Revision{Field: "rev"}, Removal: &apply.Removal{EntityType: "Three"},
				Retry: apply.Retry{Attempts: 40}, Logic: logic}, f.db, reader{f})
			require.NoError(t, err)

			var all []abi.Event
			for _, id := range []string{"o1", "o2", "w1", "w2", "w3"} {
				var specs []string
				for range 2 + rng.IntN(8) {
					specs = append(specs, []string{"Add:", "Add:", "Add:", "Skip", "Reject", "Flaky:"}[rng.IntN(6)]+"@"+[]string{"x", "y"}[rng.IntN(2)])
				}
				for i, s := range specs {
					if tag, rest, ok := strings.Cut(s, ":"); ok {
						specs[i] = tag + ":" + fmt.Sprint(1+rng.IntN(9)) + rest
					}
				}
				all = append(all, f.append(t, id, specs...)...)
			}
			// w0 comes first in fold order and only ever skips.
			all = append(all, f.append(t, "w0", "Skip@x", "Skip@y", "Skip@x")...)
			for _, row := range []string{"x", "y"} {
				var specs []string
				for range 3 + rng.IntN(8) {
					spec := "Add:" + fmt.Sprint(1+rng.IntN(99))
					if rng.IntN(4) == 0 {
						spec = "Skip"
					}
					specs = append(specs, spec+"@"+row)
				}
				all = append(all, f.append(t, "s"+row, specs...)...)
			}

			// Lost races: another writer bumps the revision between the
			// engine's read and its write, now and then.
			racer := dynamo.New(f.env.Client)
			var races atomic.Int64
			logic.onEvolve = func() {
				if rand.IntN(4) != 0 {
					return
				}
				row := []string{"x", "y"}[rand.IntN(2)]
				it, err := racer.GetItem(ctx, f.table, testlogic.RowKey(row))
				if err != nil || it == nil {
					return
				}
				rev, _ := strconv.ParseInt(it["rev"].Str, 10, 64)
				read := it["rev"]
				it["rev"] = abi.N(fmt.Sprint(rev + 1))
				cond := &store.Cond{Expr: "#r = :r", Names: map[string]string{"#r": "rev"}, Values: map[string]abi.Value{":r": read}}
				if racer.PutItem(ctx, store.Put{Table: f.table, Item: it, Cond: cond}) == nil {
					races.Add(1)
				}
			}
			f.env.Server.SetFaults(ddblocal.FaultConfig{Seed: int64(seed), Rates: map[string]map[string]float64{
				// High enough that some requests fail past the SDK's own retries.
				"PutItem":      {"ThrottlingException": 0.25, "InternalServerError": 0.25, "TransactionConflictException": 0.2},
				"BatchGetItem": {"ProvisionedThroughputExceededException": 0.5},
				"GetItem":      {"ThrottlingException": 0.4},
				"Query":        {"InternalServerError": 0.5},
			}})
			applied, failures := deliverThree(t, e, rng, all)
			f.env.Server.SetFaults(ddblocal.FaultConfig{})
			t.Logf("%d events, %d failed row attempts redelivered, %d lost races injected", len(all), failures, races.Load())
			require.Positive(t, failures, "the injected faults must fail some rows")
			for k, n := range applied {
				assert.LessOrEqual(t, n, 1, "%s applied %d times", k, n)
			}
			for _, row := range []string{"x", "y"} {
				want := sequentialFold(logic, row, all)
				got := f.row(t, row)
				assert.True(t, abi.ItemsEqual(domainOf(want), domainOf(got)), "row %s:\nwant %v\ngot  %v", row, domainOf(want), domainOf(got))
				checkWeighOwner(t, row, got, all)
			}

			// Remove x; every redelivery afterwards finds it already applied.
			closing := f.append(t, "o1", "Close@x")
			o := e.ApplyBatch(ctx, routed(closing)).Rows[0]
			require.NoError(t, o.Err)
			require.True(t, o.Removed)
			yBefore := domainOf(f.row(t, "y"))
			f.env.Server.SetFaults(ddblocal.FaultConfig{Seed: int64(seed) + 10, Rates: map[string]map[string]float64{
				"PutItem": {"ThrottlingException": 0.5}, "BatchGetItem": {"ProvisionedThroughputExceededException": 0.5}}})
			applied, _ = deliverThree(t, e, rng, all)
			f.env.Server.SetFaults(ddblocal.FaultConfig{})
			for k := range applied {
				if strings.HasSuffix(k, "@x") {
					t.Errorf("redelivered %s was applied to the removed row", k)
				}
			}
			_, ok, err := e.Row(ctx, testlogic.RowKey("x"))
			require.NoError(t, err)
			assert.False(t, ok, "the tombstone is never resurrected by a redelivery")
			assert.True(t, apply.IsTombstone(f.row(t, "x")))
			assert.Equal(t, yBefore, domainOf(f.row(t, "y")), "row y is unchanged by redeliveries")
		})
	}
}

// checkWeighOwner checks the weigh source's field of a row: it follows an
// instance that applied or rejected an event of the row (never w0, which
// only skips), that instance has no map entry besides, w0 has none at all,
// and the field's checkpoint covers the owner's last event written to the
// row without passing the owner's head.
func checkWeighOwner(t *testing.T, row string, got abi.Item, all []abi.Event) {
	t.Helper()
	owner := got["weighSession"].Str
	writes, head := map[string]uint64{}, map[string]uint64{}
	for _, ev := range all {
		head[ev.StreamID] = max(head[ev.StreamID], ev.Version)
		if sourceOf(ev.StreamID) == "weigh" && rowOf(ev) == row && ev.Type != "Skip" {
			writes[ev.StreamID] = max(writes[ev.StreamID], ev.Version)
		}
	}
	if len(writes) == 0 {
		assert.Empty(t, owner, "row %s: no weigh instance wrote it", row)
		return
	}
	require.Contains(t, writes, owner, "row %s: weighSession %q is an instance that wrote the row (w0 only skips)", row, owner)
	v, err := strconv.ParseUint(got["weighVersion"].Str, 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v+1, writes[owner], "row %s: weighVersion %d (offset -1) covers %s's last event written to the row", row, v, owner)
	assert.LessOrEqual(t, v+1, head[owner], "row %s: weighVersion %d (offset -1) is a version of %s", row, v, owner)
	cps := got["checkpoints"].Map
	assert.NotContains(t, cps, "weigh#"+owner, "row %s: the owner keeps its checkpoint in the field only", row)
	assert.NotContains(t, cps, "weigh#w0", "row %s: an instance that only skips gets no map entry", row)
}

// deliverThree sends every event at least once, some twice, shuffled, in
// random batches over 4 lanes; a batch with a failed row is delivered again
// (as the change feed would) until it succeeds. It returns how often each
// "<streamId>/<version>@<row>" was applied, and the failed row attempts.
func deliverThree(t *testing.T, e *apply.Engine, rng *rand.Rand, all []abi.Event) (map[string]int, int) {
	deliveries := append([]abi.Event(nil), all...)
	for _, ev := range all {
		if rng.IntN(3) == 0 {
			deliveries = append(deliveries, ev)
		}
	}
	rng.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	var batches [][]abi.Event
	for len(deliveries) > 0 {
		k := min(len(deliveries), 1+rng.IntN(10))
		batches = append(batches, deliveries[:k])
		deliveries = deliveries[k:]
	}
	applied := map[string]int{}
	failures := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan []abi.Event)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				for try := 0; ; try++ {
					r := e.ApplyBatch(ctx, routed(b))
					failed := len(r.KeyFailures)
					mu.Lock()
					for _, o := range r.Rows {
						if o.Err != nil {
							failed++
							continue
						}
						for _, in := range o.Instances {
							if in.Err != nil {
								failed++
							}
						}
						for _, ev := range o.Applied() {
							applied[fmt.Sprintf("%s/%d@%s", ev.StreamID, ev.Version, rowOf(ev))]++
						}
					}
					failures += failed
					mu.Unlock()
					if failed == 0 {
						break
					}
					if !assert.Less(t, try, 100, "a batch keeps failing") {
						return
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
	return applied, failures
}
