package apply_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// repairCall marks the context of a repair (rebuild, catch-up, backfill
// step), so the evolve hook knows it runs between a repair's read of a row
// and its write.
type repairCall struct{}

// hooked is a logic that runs hook before every evolve, with the call's
// context.
type hooked struct {
	logic.Logic
	hook func(ctx context.Context)
}

func (h *hooked) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	h.hook(ctx)
	return h.Logic.Evolve(ctx, req)
}

// TestM9_PropertyRepairsRaceLiveBatchesWithEffects races rebuilds (by
// stream instance and by row), catch-ups (by instance and by row) and
// backfill steps (rebuild, then catch-up) against live batches on three
// rows that three sources feed, with effects, a removal, throttling,
// server errors and lost write responses. The interleavings are forced:
// while a repair has read a row and not yet written it, a live batch is
// applied to the same rows (every other time), and a backfill step always
// has a live batch between its rebuild and its catch-up. Then: every row
// equals the sequential fold of its events; the effects committed are
// exactly those of the fold, each once; each is delivered at least once,
// in commit order; no event is reported applied twice across live batches
// and repairs; the removed row is never resurrected.
func TestM9_PropertyRepairsRaceLiveBatchesWithEffects(t *testing.T) {
	var forced, raced atomic.Int64
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { m9Property(t, seed, &forced, &raced) })
	}
	t.Logf("live batches forced into repairs: %d; repairs that lost a race and read again: %d", forced.Load(), raced.Load())
	assert.Positive(t, forced.Load(), "live batches ran between repairs' reads and writes")
	assert.Positive(t, raced.Load(), "some repairs lost the race and redid their fold")
}

func m9Property(t *testing.T, seed uint64, forced, raced *atomic.Int64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	f := newFixture(t)
	table := "three_repair"
	_, err := f.db.EnsureTable(ctx, dynamo.TableSpec{Name: table, KeyAttrs: []string{"pk", "sk"}, Stream: true,
		Indexes: []dynamo.IndexSpec{{Name: "outbox", KeyAttrs: []string{apply.OutboxIndexPK, apply.OutboxIndexSK}}}})
	require.NoError(t, err)
	fx := testlogic.WithEffects(&threeSources{}, 0)
	fx.SetOf(effectsOf)
	lg := &hooked{Logic: fx}
	const claimFor = 8 * time.Millisecond
	rec := newRecorder(2 * claimFor)
	var abandoned [4]int
	var mu sync.Mutex
	p := apply.Projection{Name: "three", Table: table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest}, {Name: "weigh", Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "orderVersion", InstanceField: "orderId", Map: "checkpoints"},
		Revision:   &apply.Revision{Field: "rev"}, Removal: &apply.Removal{EntityType: "Three"},
		Outbox: &apply.Outbox{EntityType: "Three", Index: "outbox"},
		Retry:  apply.Retry{Attempts: 60}, Logic: lg}
	layout, _ := p.OutboxLayout()
	drainer := &outbox.Drainer{DB: f.db, Layout: layout, ClaimFor: claimFor, Rows: 3, Logger: slog.New(slog.DiscardHandler)}
	p.Outbox.Drain = drainAfterWrite(drainer, rec, &abandoned, &mu)
	engineDB, lossy := lossyDB(t, f)
	e, err := apply.New(p, engineDB, reader{f})
	require.NoError(t, err)

	// applied counts every report of an applied event, live or repair.
	applied := map[string]int{}
	record := func(outs ...apply.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		for _, o := range outs {
			if o.Err == nil {
				for _, ev := range o.Applied() {
					applied[fmt.Sprintf("%s/%d@%s", ev.StreamID, ev.Version, rowOf(ev))]++
				}
			}
		}
	}
	var pool []abi.Event // events appended so far: what a live batch draws from
	live := func(ctx context.Context) {
		mu.Lock()
		var b []abi.Event
		for range 1 + rand.IntN(6) {
			b = append(b, pool[rand.IntN(len(pool))])
		}
		mu.Unlock()
		record(e.ApplyBatch(ctx, routed(b)).Rows...)
	}
	// grow appends an event to an instance of x or y and delivers it: a
	// live write past every event a repair has read.
	var appendMu sync.Mutex
	var grown []abi.Event
	grow := func(ctx context.Context) {
		appendMu.Lock()
		id := []string{"o1", "o2", "w1", "w2"}[rand.IntN(4)]
		ne := newEvent(fmt.Sprintf("Add:%d@%s", 1+rand.IntN(9), []string{"x", "y"}[rand.IntN(2)]))
		var evs []abi.Event
		for try := 0; try < 20 && evs == nil; try++ {
			if head, err := f.es.Head(ctx, f.stream, id); err == nil {
				evs, _ = f.es.Append(ctx, f.stream, id, head, ne)
			}
		}
		appendMu.Unlock()
		if evs == nil {
			return
		}
		mu.Lock()
		pool, grown = append(pool, evs...), append(grown, evs...)
		mu.Unlock()
		record(e.ApplyBatch(ctx, routed(evs)).Rows...)
	}
	lg.hook = func(ctx context.Context) {
		if ctx.Value(repairCall{}) == nil {
			return
		}
		switch rand.IntN(4) {
		case 0:
			forced.Add(1)
			live(context.Background())
		case 1:
			forced.Add(1)
			grow(context.Background())
		}
	}

	// The rows exist before any repair: z is fed by o3 alone and removed
	// by its last event.
	all := append(f.append(t, "o1", "Add:1@x", "Add:2@y"), f.append(t, "o3", "Add:3@z")...)
	for _, ev := range all {
		o := e.ApplyBatch(ctx, routed([]abi.Event{ev})).Rows[0]
		require.NoError(t, o.Err)
		record(o)
	}
	refs := []apply.InstanceRef{{Source: "order", StreamID: "o1"}, {Source: "order", StreamID: "o2"}, {Source: "order", StreamID: "o3"},
		{Source: "scan", StreamID: "sx"}, {Source: "scan", StreamID: "sy"}, {Source: "weigh", StreamID: "w1"}, {Source: "weigh", StreamID: "w2"}}
	rows := []string{"x", "y", "z"}
	repair := func(ctx context.Context, op int) {
		ctx = context.WithValue(ctx, repairCall{}, true)
		ref, row := refs[rand.IntN(len(refs))], testlogic.RowKey(rows[rand.IntN(len(rows))])
		var outs []apply.Outcome
		switch op {
		case 0:
			outs, _ = e.RebuildInstance(ctx, ref)
		case 1:
			o, _ := e.RebuildRowAll(ctx, row, nil)
			outs = []apply.Outcome{o}
		case 2:
			o, _ := e.CatchUpInstance(ctx, ref)
			outs = []apply.Outcome{o}
		case 3:
			o, _ := e.CatchUpRow(ctx, row)
			outs = []apply.Outcome{o}
		default: // a backfill step: rebuild, the live feed, catch-up
			outs, _ = e.RebuildInstance(ctx, ref)
			forced.Add(1)
			live(context.Background())
			for _, o := range outs {
				c, _ := e.CatchUpRow(ctx, o.Key)
				outs = append(outs, c)
			}
		}
		for _, o := range outs {
			if o.Attempts > 1 {
				raced.Add(1)
			}
		}
		record(outs...)
	}
	phase := func(s int64, evs []abi.Event) {
		mu.Lock()
		pool = append(pool, evs...)
		deliveries := append([]abi.Event(nil), pool...)
		mu.Unlock()
		f.env.Server.SetFaults(ddblocal.FaultConfig{Seed: int64(seed)*10 + s, Rates: map[string]map[string]float64{
			"PutItem":            {ddblocal.FaultThrottling: 0.1, ddblocal.FaultInternal: 0.1},
			"TransactWriteItems": {ddblocal.FaultThrottling: 0.1, ddblocal.FaultTransactionConflict: 0.1},
			"GetItem":            {ddblocal.FaultThrottling: 0.2},
			"Query":              {ddblocal.FaultInternal: 0.2},
		}})
		// Repairs first, so they find events no delivery has brought yet;
		// then repairs and the live feed at once.
		for op := range 5 {
			repair(ctx, op)
		}
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				for i := range 8 {
					repair(ctx, (w+i)%5)
				}
			})
		}
		got, _ := deliverThree(t, e, rng, deliveries)
		wg.Wait()
		f.env.Server.SetFaults(ddblocal.FaultConfig{})
		mu.Lock()
		for k, n := range got {
			applied[k] += n
		}
		mu.Unlock()
	}

	epoch1 := randomEvents(t, f, rng, []string{"o1", "o2", "w1", "w2"}, []string{"x", "y"}, []string{"x", "y"})
	epoch1 = append(epoch1, f.append(t, "o3", "Add:4@z", "Skip@z", "Reject@z")...)
	phase(1, epoch1)
	epoch2 := randomEvents(t, f, rng, []string{"o1", "w2"}, []string{"x", "y"}, []string{"y"})
	epoch2 = append(epoch2, f.append(t, "o3", "Add:5@z", "Close@z")...)
	phase(2, epoch2)
	// Every repair once more without faults; the change feed delivers
	// every event once more (those appended during repairs included); the
	// final sweep.
	for op := range 5 {
		repair(ctx, op)
	}
	mu.Lock()
	all = append(append(append(all, epoch1...), epoch2...), grown...)
	mu.Unlock()
	got, _ := deliverThree(t, e, rng, all)
	for k, n := range got {
		applied[k] += n
	}
	rec.mu.Lock()
	rec.flaky = false
	rec.mu.Unlock()
	for deadline := time.Now().Add(time.Minute); ; {
		_, err := drainer.DrainPending(ctx, rec)
		require.NoError(t, err)
		pending, err := drainer.Pending(ctx)
		require.NoError(t, err)
		if len(pending) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "seed %d: rows keep pending effects", seed)
		time.Sleep(claimFor)
	}

	for k, n := range applied {
		assert.LessOrEqual(t, n, 1, "seed %d: %s reported applied %d times", seed, k, n)
	}
	commits, _ := committed(t, f, table)
	for _, row := range rows {
		want, wantIDs := expectedFold(row, all)
		got, err := f.db.GetItem(ctx, table, testlogic.RowKey(row))
		require.NoError(t, err)
		if want == nil {
			assert.True(t, apply.IsTombstone(got), "seed %d: row %s stays removed, got %v", seed, row, got)
			_, ok, err := e.Row(ctx, testlogic.RowKey(row))
			require.NoError(t, err)
			assert.False(t, ok, "seed %d: the tombstone of %s is never resurrected", seed, row)
		} else {
			assert.True(t, abi.ItemsEqual(domainOf(want), domainOf(got)), "seed %d row %s:\nwant %v\ngot  %v", seed, row, domainOf(want), domainOf(got))
		}
		w, g := append([]string(nil), wantIDs...), append([]string(nil), commits[row]...)
		sort.Strings(w)
		sort.Strings(g)
		assert.Equal(t, w, g, "seed %d row %s: the effects committed are those of the sequential fold, each once", seed, row)
		assert.Equal(t, commits[row], rec.first[row], "seed %d row %s: every effect delivered, first deliveries in commit order", seed, row)
		assert.Empty(t, outboxItemsOf(t, f, table, row), "seed %d row %s: nothing is left in the outbox", seed, row)
	}
	assert.Equal(t, "Close", epoch2[len(epoch2)-1].Type, "the last event of z removes it")
	t.Logf("seed %d: %d events (%d appended during repairs), %d lost write responses", seed, len(all), len(grown), lossy.lost.Load())
}
