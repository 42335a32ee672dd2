package apply_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
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
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// oPropertySeeds are the seeds TestO2_PropertyThreeSourcesEffectsTombstonesUnderFaults
// runs, fixed so a failure reproduces (the scheduling still varies).
var oPropertySeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// randomEvents appends 2 to 7 random events (Add, Skip, Reject) to each of
// the order and weigh instances ids, for rows, and 2 to 6 scans (Add, Skip)
// to the scan instance of each of scanRows.
func randomEvents(t *testing.T, f *fixture, rng *rand.Rand, ids, rows, scanRows []string) []abi.Event {
	var all []abi.Event
	for _, id := range ids {
		var specs []string
		for range 2 + rng.IntN(6) {
			spec := []string{"Add:", "Add:", "Add:", "Skip", "Reject"}[rng.IntN(5)]
			if spec == "Add:" {
				spec += fmt.Sprint(1 + rng.IntN(9))
			}
			specs = append(specs, spec+"@"+rows[rng.IntN(len(rows))])
		}
		all = append(all, f.append(t, id, specs...)...)
	}
	for _, row := range scanRows {
		var specs []string
		for range 2 + rng.IntN(5) {
			spec := "Add:" + fmt.Sprint(1+rng.IntN(99))
			if rng.IntN(4) == 0 {
				spec = "Skip"
			}
			specs = append(specs, spec+"@"+row)
		}
		all = append(all, f.append(t, "s"+row, specs...)...)
	}
	return all
}

// TestO2_PropertyThreeSourcesEffectsTombstonesUnderFaults feeds three rows
// from three sources (scan in latest mode) whose applied events carry
// effects, in three epochs: random events; removals of rows x and z; a
// restart of x and more events for y. Each epoch is delivered, with every
// earlier event again, shuffled and partly twice over four lanes, with
// throttling, server errors, transaction conflicts and lost races injected;
// the delivery after each write is now and then abandoned (the call ends,
// or its context is cancelled before or during the delivery), background
// drainers with a claim shorter than some deliveries run meanwhile, and a
// final sweep drains what is left. Then: every row equals the sequential
// fold, epoch by epoch, in declaration order; no removed row comes back by
// a redelivery; the effects committed are exactly those of the fold, each
// once; each is delivered at least once, the first deliveries of a row's
// effects in commit order; and no outbox item is left.
func TestO2_PropertyThreeSourcesEffectsTombstonesUnderFaults(t *testing.T) {
	redelivered := 0
	for _, seed := range oPropertySeeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { redelivered += oProperty(t, seed) })
	}
	assert.Positive(t, redelivered, "some deliveries outlasted their claims and were taken over")
}

// oProperty runs the property for one seed and returns how many deliveries
// repeated an effect already delivered.
func oProperty(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := newFixture(t)
	table := "three_outbox"
	_, err := f.db.EnsureTable(ctx, dynamo.TableSpec{Name: table, KeyAttrs: []string{"pk", "sk"}, Stream: true,
		Indexes: []dynamo.IndexSpec{{Name: "outbox", KeyAttrs: []string{apply.OutboxIndexPK, apply.OutboxIndexSK}}}})
	require.NoError(t, err)
	logic := &threeSources{}
	fx := testlogic.WithEffects(logic, 0)
	fx.SetOf(effectsOf)
	const claimFor = 8 * time.Millisecond
	rec := newRecorder(2 * claimFor)
	var abandoned [4]int
	var mu sync.Mutex
	p := apply.Projection{Name: "three", Table: table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest}, {Name: "weigh", Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "orderVersion", InstanceField: "orderId", Map: "checkpoints"},
		Revision:   &apply.Revision{Field: "rev"}, Removal: &apply.Removal{EntityType: "Three"},
		Outbox: &apply.Outbox{EntityType: "Three", Index: "outbox"},
		Retry:  apply.Retry{Attempts: 40}, Logic: fx}
	layout, ok := p.OutboxLayout()
	require.True(t, ok)
	drainer := &outbox.Drainer{DB: f.db, Layout: layout, ClaimFor: claimFor, Rows: 3, Logger: slog.New(slog.DiscardHandler)}
	p.Outbox.Drain = drainAfterWrite(drainer, rec, &abandoned, &mu)
	engineDB, lossy := lossyDB(t, f)
	e, err := apply.New(p, engineDB, reader{f})
	require.NoError(t, err)
	rowOfTable := func(name string) abi.Item {
		it, err := f.db.GetItem(ctx, table, testlogic.RowKey(name))
		require.NoError(t, err)
		return it
	}

	// Lost races: another writer bumps a row's revision between the
	// engine's read and its write, now and then.
	racer := dynamo.New(f.env.Client)
	var races atomic.Int64
	logic.onEvolve = func() {
		if rand.IntN(4) != 0 {
			return
		}
		it, err := racer.GetItem(ctx, table, testlogic.RowKey([]string{"x", "y", "z"}[rand.IntN(3)]))
		if err != nil || it == nil {
			return
		}
		read := it["rev"]
		rev, _ := strconv.ParseInt(read.Str, 10, 64)
		it["rev"] = abi.N(fmt.Sprint(rev + 1))
		cond := &store.Cond{Expr: "#r = :r", Names: map[string]string{"#r": "rev"}, Values: map[string]abi.Value{":r": read}}
		if racer.PutItem(ctx, store.Put{Table: table, Item: it, Cond: cond}) == nil {
			races.Add(1)
		}
	}
	faults := func(s int64) {
		// StaleReads: the sparse index lags behind the writes.
		f.env.Server.SetFaults(ddblocal.FaultConfig{Seed: int64(seed)*10 + s, StaleReads: 5 * time.Millisecond, Rates: map[string]map[string]float64{
			"PutItem":            {ddblocal.FaultThrottling: 0.2, ddblocal.FaultInternal: 0.15, ddblocal.FaultTransactionConflict: 0.15},
			"TransactWriteItems": {ddblocal.FaultThrottling: 0.2, ddblocal.FaultInternal: 0.15, ddblocal.FaultTransactionConflict: 0.2},
			"BatchGetItem":       {ddblocal.FaultThroughput: 0.4},
			"GetItem":            {ddblocal.FaultThrottling: 0.3},
			"Query":              {ddblocal.FaultInternal: 0.3},
			"UpdateItem":         {ddblocal.FaultThrottling: 0.2},
			"DeleteItem":         {ddblocal.FaultInternal: 0.2},
		}})
	}
	// Background drainers sweep the pending rows while the lanes write.
	var drainErrs atomic.Int64
	background := func() (stop func()) {
		done := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					case <-time.After(time.Duration(1+rand.IntN(5)) * time.Millisecond):
					}
					if _, err := drainer.DrainPending(ctx, rec); err != nil {
						drainErrs.Add(1)
					}
				}
			}()
		}
		return func() { close(done); wg.Wait() }
	}
	deliverEpoch := func(s int64, evs []abi.Event) map[string]int {
		faults(s)
		stop := background()
		applied, failures := deliverThree(t, e, rng, evs)
		stop()
		f.env.Server.SetFaults(ddblocal.FaultConfig{})
		t.Logf("seed %d epoch %d: %d events delivered, %d failed row attempts redelivered", seed, s, len(evs), failures)
		return applied
	}

	// Epoch 1: random events for x, y, z.
	ids := []string{"o1", "o2", "w1", "w2", "w3"}
	epoch1 := randomEvents(t, f, rng, ids, []string{"x", "y", "z"}, []string{"x", "y", "z"})
	onlyOnce(t, seed, 1, deliverEpoch(1, epoch1), epoch1)
	for _, row := range []string{"x", "y", "z"} {
		want, _ := expectedFold(row, epoch1)
		assert.True(t, abi.ItemsEqual(domainOf(want), domainOf(rowOfTable(row))), "seed %d epoch 1 row %s:\nwant %v\ngot  %v", seed, row, domainOf(want), domainOf(rowOfTable(row)))
	}

	// Epoch 2: x and z are removed, while everything is redelivered.
	epoch2 := append(f.append(t, "o1", "Close@x"), f.append(t, "o2", "Close@z")...)
	onlyOnce(t, seed, 2, deliverEpoch(2, append(append([]abi.Event(nil), epoch1...), epoch2...)), epoch2)
	for _, row := range []string{"x", "z"} {
		_, ok, err := e.Row(ctx, testlogic.RowKey(row))
		require.NoError(t, err)
		assert.False(t, ok, "seed %d: row %s is removed", seed, row)
		assert.True(t, apply.IsTombstone(rowOfTable(row)), "seed %d: row %s is a tombstone", seed, row)
	}

	// Epoch 3: x restarts, y gets more events, z stays removed; everything
	// is redelivered.
	epoch3 := f.append(t, "o1", fmt.Sprintf("Add:%d@x", 1+rng.IntN(9)))
	epoch3 = append(epoch3, randomEvents(t, f, rng, ids, []string{"x", "y"}, []string{"x"})...)
	onlyOnce(t, seed, 3, deliverEpoch(3, append(append(append([]abi.Event(nil), epoch1...), epoch2...), epoch3...)), epoch3)

	// The final sweep: what the abandoned calls and failed deliveries left.
	rec.mu.Lock()
	rec.flaky = false
	rec.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := drainer.DrainPending(ctx, rec)
		require.NoError(t, err)
		pending, err := drainer.Pending(ctx)
		require.NoError(t, err)
		if len(pending) == 0 {
			break
		}
		var names []string
		for _, k := range pending {
			names = append(names, rowName(k))
		}
		require.True(t, time.Now().Before(deadline), "seed %d: rows %v keep pending effects", seed, names)
		time.Sleep(claimFor) // a claim an abandoned call left behind expires
	}

	wantIDs := map[string][]string{}
	for _, row := range []string{"x", "y", "z"} {
		want, fxIDs := expectedFold(row, epoch1, epoch2, epoch3)
		wantIDs[row] = fxIDs
		got := rowOfTable(row)
		if want == nil {
			assert.True(t, apply.IsTombstone(got), "seed %d: row %s stays removed, got %v", seed, row, got)
			continue
		}
		assert.True(t, abi.ItemsEqual(domainOf(want), domainOf(got)), "seed %d row %s:\nwant %v\ngot  %v", seed, row, domainOf(want), domainOf(got))
	}
	_, ok, err = e.Row(ctx, testlogic.RowKey("z"))
	require.NoError(t, err)
	assert.False(t, ok, "seed %d: the tombstone of z is never resurrected by a redelivery", seed)

	commits, sks := committed(t, f, table)
	total := 0
	for _, row := range []string{"x", "y", "z"} {
		total += len(commits[row])
		assert.True(t, sort.StringsAreSorted(sks[row]), "seed %d row %s: outbox keys in commit order %v", seed, row, sks[row])
		want, got := append([]string(nil), wantIDs[row]...), append([]string(nil), commits[row]...)
		sort.Strings(want)
		sort.Strings(got)
		assert.Equal(t, want, got, "seed %d row %s: the effects committed are those of the sequential fold, each once", seed, row)
		assert.Equal(t, commits[row], rec.first[row], "seed %d row %s: every effect delivered, first deliveries in commit order", seed, row)
		items := outboxItemsOf(t, f, table, row)
		assert.Empty(t, items, "seed %d row %s: nothing is left in the outbox", seed, row)
	}
	dups := 0
	for _, n := range rec.delivered {
		dups += n - 1
	}
	t.Logf("seed %d: %d effects committed, %d redelivered; %d lost races, %d write responses lost; calls abandoned: %d ended, %d cancelled before, %d during delivery; %d failed deliveries; %d failed background sweeps",
		seed, total, dups, races.Load(), lossy.lost.Load(), abandoned[0], abandoned[1], abandoned[2], rec.fails, drainErrs.Load())
	require.Positive(t, total, "seed %d: the fold commits effects", seed)
	assert.Positive(t, abandoned[0]+abandoned[1]+abandoned[2], "seed %d: some deliveries were abandoned", seed)
	return dups
}

// onlyOnce checks that an epoch's delivery applied only that epoch's
// events, each at most once: a redelivered earlier event (one removed with
// its row included) is never applied again.
func onlyOnce(t *testing.T, seed uint64, epoch int, applied map[string]int, evs []abi.Event) {
	t.Helper()
	fresh := map[string]bool{}
	for _, ev := range evs {
		fresh[fmt.Sprintf("%s/%d@%s", ev.StreamID, ev.Version, rowOf(ev))] = true
	}
	for k, n := range applied {
		assert.True(t, fresh[k], "seed %d epoch %d: redelivered %s was applied again", seed, epoch, k)
		assert.LessOrEqual(t, n, 1, "seed %d epoch %d: %s applied %d times", seed, epoch, k, n)
	}
}

// outboxItemsOf returns the outbox items left in a row's partition of
// table (a strongly consistent query).
func outboxItemsOf(t *testing.T, f *fixture, table, row string) []abi.Item {
	t.Helper()
	page, err := f.db.Query(context.Background(), store.Query{Table: table, KeyCond: "pk = :h AND begins_with(sk, :p)",
		Values: map[string]abi.Value{":h": abi.S("Ledger#" + row), ":p": abi.S("L#outbox#")}})
	require.NoError(t, err)
	return page.Items
}
