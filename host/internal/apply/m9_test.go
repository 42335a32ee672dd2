package apply_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// twoSources is the threeSources logic with a checkpoint map: order, scan
// (latest mode) and weigh over the test stream, routed by stream id.
func twoSources(t *testing.T, f *fixture, mod func(*apply.Projection)) (*apply.Engine, *threeSources) {
	t.Helper()
	logic := &threeSources{}
	p := apply.Projection{Name: "three", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest}, {Name: "weigh", Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Map: "checkpoints"}, Revision: &apply.Revision{Field: "rev"},
		Removal: &apply.Removal{EntityType: "Three"}, Logic: logic}
	if mod != nil {
		mod(&p)
	}
	e, err := apply.New(p, f.db, reader{f})
	require.NoError(t, err)
	return e, logic
}

// A rebuild by stream id of a row that two sources feed (order o1 adds 1,
// weigh w1 adds 10) re-derives the row from both: the weigh part and its
// checkpoint stay.
func TestM9_StreamRebuildKeepsTheOtherSourcesStateAndCheckpoint(t *testing.T) {
	f := newFixture(t)
	e, _ := twoSources(t, f, nil)
	o1 := f.append(t, "o1", "Add:1@x")
	w1 := f.append(t, "w1", "Add:10@x")
	require.NoError(t, e.ApplyBatch(ctx, routed(append(o1, w1...))).Rows[0].Err)
	require.Equal(t, "11", attr(f.row(t, "x"), "total"))

	outs, err := e.Rebuild(ctx, "o1")

	require.NoError(t, err)
	require.Len(t, outs, 1)
	row := f.row(t, "x")
	assert.Equal(t, "11", attr(row, "total"), "the weigh part is re-derived too")
	assert.Equal(t, "1", attr(row, "log_weigh_w1"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "order#o1"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "weigh#w1"), "the weigh checkpoint stays")
	assert.Equal(t, "2", attr(row, "rev"), "one write, the next revision")

	// A redelivery of both is already applied.
	o := e.ApplyBatch(ctx, routed(append(o1, w1...))).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
}

// A rebuild whose write loses a race with the live feed, which applied a
// newer event meanwhile, re-reads the row and folds up to what the live
// feed wrote: the checkpoint never steps back, so no later catch-up or
// redelivery applies that event (and commits its effects) a second time.
func TestM9_ARebuildThatLosesARaceNeverStepsTheCheckpointBack(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:2@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs...)).Rows[0].Err)
	var once atomic.Bool
	f.logic.OnEvolve = func(*abi.EvolveRequest) {
		if !once.CompareAndSwap(false, true) {
			return
		}
		// The live feed applies v3 between the rebuild's read and its write.
		v3 := f.append(t, "a", "Add:4@x")
		require.NoError(t, e.ApplyBatch(ctx, inputs(v3...)).Rows[0].Err)
	}

	outs, err := e.Rebuild(ctx, "a")

	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Greater(t, outs[0].Attempts, 1, "the rebuild lost the race and read again")
	row := f.row(t, "x")
	assert.Equal(t, "3", mapEntry(row, "checkpoints", "Acct#a"), "the checkpoint does not step back below v3")
	assert.Equal(t, "7", attr(row, "total"))
	assert.Equal(t, "1,2,3", attr(row, "log"))

	// Catch-up and redelivery find v3 applied: one outbox item each.
	o, err := e.CatchUp(ctx, "a")
	require.NoError(t, err)
	assert.Empty(t, o.Applied())
	assert.Len(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"), 3, "one effect per event, v3's committed once")
}

// A rebuild of a row whose named instances' events are all skipped folds
// into no row: it writes nothing and says so, and the row keeps its state.
func TestM8_RebuildRowWhoseEventsAreAllSkippedSaysItWroteNothing(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	f.append(t, "a", "Skip@x", "Skip@x")
	damaged := abi.Item{"pk": abi.S("Ledger#x"), "sk": abi.S("L"), "total": abi.N("999"), "rev": abi.N("4"),
		"checkpoints": abi.M(abi.Item{"Acct#a": abi.N("2")})}
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, damaged)))

	o, err := e.RebuildRow(ctx, testlogic.RowKey("x"), []apply.InstanceRef{ref("a")})

	require.ErrorIs(t, err, apply.ErrRebuildFoldsNoRow)
	assert.ErrorContains(t, err, "nothing was written")
	assert.False(t, o.Written)
	row := f.row(t, "x")
	assert.Equal(t, "999", attr(row, "total"), "the row is left as it was")
	assert.Equal(t, "4", attr(row, "rev"))
}

func weighRef(id string) apply.InstanceRef { return apply.InstanceRef{Source: "weigh", StreamID: id} }

// A rebuild or catch-up may name an instance of any source: the weigh
// instance's rows are rebuilt from every instance, the order part kept;
// catching the weigh instance up brings the row's other instances up too.
func TestM9_RebuildAndCatchUpOfAnotherSourcesInstance(t *testing.T) {
	f := newFixture(t)
	e, _ := twoSources(t, f, nil)
	o1 := f.append(t, "o1", "Add:1@x")
	w1 := f.append(t, "w1", "Add:10@x")
	require.NoError(t, e.ApplyBatch(ctx, routed(append(o1, w1...))).Rows[0].Err)

	outs, err := e.RebuildInstance(ctx, weighRef("w1"))
	require.NoError(t, err)
	require.Len(t, outs, 1)
	row := f.row(t, "x")
	assert.Equal(t, "11", attr(row, "total"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "order#o1"))

	f.append(t, "o1", "Add:100@x") // never delivered
	f.append(t, "w1", "Add:20@x")  // never delivered
	o, err := e.CatchUpInstance(ctx, weighRef("w1"))
	require.NoError(t, err)
	assert.True(t, o.Written)
	assert.Equal(t, "2,2", versions(o.Applied()), "order v2 and weigh v2, in fold order")
	row = f.row(t, "x")
	assert.Equal(t, "131", attr(row, "total"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "order#o1"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "weigh#w1"))

	_, err = e.RebuildInstance(ctx, apply.InstanceRef{Source: "nope", StreamID: "w1"})
	assert.ErrorContains(t, err, `no source "nope"; its sources are [order scan weigh]`)
}

// Events after the row's checkpoint (never delivered) are applied by the
// rebuild as a delivery would apply them: reported, their effects
// committed once; the delivery that comes later finds them applied.
func TestM9_ARebuildAppliesEventsAfterTheRowsCheckpointWithTheirEffects(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:2@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs...)).Rows[0].Err)
	late := f.append(t, "a", "Add:4@x") // not delivered yet

	outs, err := e.Rebuild(ctx, "a")

	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, "3", versions(outs[0].Applied()), "only the event after the checkpoint is reported")
	assert.Equal(t, 1, outs[0].Enqueued)
	row := f.row(t, "x")
	assert.Equal(t, "7", attr(row, "total"))
	assert.Equal(t, "3", mapEntry(row, "checkpoints", "Acct#a"))
	o := e.ApplyBatch(ctx, inputs(late...)).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "the late delivery finds v3 applied")
	assert.Len(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"), 3, "one effect per event")
}

// A row the table does not hold yet (a new read model, a new table) is
// rebuilt from history: every event folded, none reported, no effect
// committed.
func TestM9_ARebuildOfANewRowIsHistoryWithoutEffects(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	f.append(t, "a", "Add:1@x", "Add:2@x", "Add:3@y")

	outs, err := e.Rebuild(ctx, "a")

	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.True(t, o.Written)
		assert.Empty(t, o.Applied(), "history is never reported")
		assert.Zero(t, o.Enqueued)
	}
	assert.Equal(t, "3", attr(f.row(t, "x"), "total"))
	assert.Equal(t, "2", mapEntry(f.row(t, "x"), "checkpoints", "Acct#a"))
	assert.Equal(t, "3", attr(f.row(t, "y"), "total"))
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"))
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#y", "L#outbox#"))
}

// An instance the live feed adds to the row while a rebuild runs (between
// its read and its write) is folded by the rebuild's next attempt, not
// dropped.
func TestM9_AnInstanceTheLiveFeedAddsDuringARebuildIsKept(t *testing.T) {
	f := newFixture(t)
	e, logic := twoSources(t, f, nil)
	o1 := f.append(t, "o1", "Add:1@x")
	require.NoError(t, e.ApplyBatch(ctx, routed(o1)).Rows[0].Err)
	w2 := f.append(t, "w2", "Add:10@x")
	var once atomic.Bool
	logic.onEvolve = func() {
		if once.CompareAndSwap(false, true) {
			require.NoError(t, e.ApplyBatch(ctx, routed(w2)).Rows[0].Err)
		}
	}

	outs, err := e.Rebuild(ctx, "o1")

	require.NoError(t, err)
	assert.Greater(t, outs[0].Attempts, 1)
	row := f.row(t, "x")
	assert.Equal(t, "11", attr(row, "total"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "weigh#w2"))
	assert.Empty(t, outs[0].Applied(), "w2's event was applied by the live feed, not by the rebuild")
}

// A rebuild from every instance of a row is refused when the row does not
// say which instance feeds one of its sources (a checkpoint field without
// an instance field), naming the command that can do it.
func TestM9_ARowRebuildThatCannotNameEveryInstanceIsRefused(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRevision)
	f.append(t, "a", "Add:1@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(f.append(t, "a", "Add:2@x")...)).Rows[0].Err)
	before := f.row(t, "x")

	_, err := e.RebuildRowAll(ctx, testlogic.RowKey("x"), nil)

	require.ErrorIs(t, err, apply.ErrUnnamedInstance)
	assert.ErrorContains(t, err, "host rebuild --row")
	assert.Equal(t, before, f.row(t, "x"), "nothing written")
	_, err = e.RebuildRowAll(ctx, testlogic.RowKey("x"), []apply.InstanceRef{ref("a")})
	require.NoError(t, err, "named, it can")
	assert.Equal(t, "3", attr(f.row(t, "x"), "total"))
}

// A rebuild re-derives the row from every instance, so one that fails
// fails the row: nothing is written, where a delivery would have written
// the others.
func TestM9_ARebuildWhoseInstanceFailsWritesNothing(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	a := f.append(t, "a", "Add:1@x")
	b := f.append(t, "b", "Add:2@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a[0], b[0])).Rows[0].Err)
	f.append(t, "b", "Fail@x")
	before := f.row(t, "x")

	_, err := e.Rebuild(ctx, "a")

	require.Error(t, err)
	assert.ErrorContains(t, err, "instance Acct#b failed")
	assert.Equal(t, before, f.row(t, "x"))
}

// A removed row rebuilt from its instances stays removed: the fold ends
// with the removal and a tombstone is written, checkpoints kept.
func TestM9_ARebuildKeepsARemovedRowRemoved(t *testing.T) {
	f := newFixture(t)
	e, _ := twoSources(t, f, nil)
	evs := append(f.append(t, "o1", "Add:1@x"), f.append(t, "w1", "Add:10@x", "Close@x")...)
	require.NoError(t, e.ApplyBatch(ctx, routed(evs)).Rows[0].Err)
	require.True(t, apply.IsTombstone(f.row(t, "x")))

	outs, err := e.Rebuild(ctx, "o1")

	require.NoError(t, err)
	assert.True(t, outs[0].Removed)
	row := f.row(t, "x")
	assert.True(t, apply.IsTombstone(row))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "order#o1"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "weigh#w1"))
	o := e.ApplyBatch(ctx, routed(evs)).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "a redelivery never resurrects it")
}

// An instance the row holds no checkpoint for, on a row the table holds,
// is applied by the rebuild as a delivery would apply it (the live feed
// would gap-fill it from version 1): reported, its effects committed once.
func TestM9_AnInstanceTheRowDoesNotKnowIsAppliedAsADeliveryWould(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	a := f.append(t, "a", "Add:1@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a...)).Rows[0].Err)
	b := f.append(t, "b", "Add:2@x", "Add:4@x") // in flight

	o, err := e.RebuildRowAll(ctx, testlogic.RowKey("x"), []apply.InstanceRef{ref("b")})

	require.NoError(t, err)
	assert.Equal(t, "1,2", versions(o.Applied()), "b's events, applied for the first time")
	assert.Equal(t, 2, o.Enqueued)
	assert.Equal(t, "7", attr(f.row(t, "x"), "total"))
	late := e.ApplyBatch(ctx, inputs(b...)).Rows[0]
	require.NoError(t, late.Err)
	assert.False(t, late.Written, "the delivery finds them applied")
	assert.Len(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"), 3, "one effect per event")
}

// A rebuild with a plugin that now skips an event an older one applied
// keeps the checkpoint the row held: it never steps back, so the event is
// not decided (and its effects committed) again by a later delivery.
func TestM9_ARebuildNeverWritesACheckpointBelowTheRowsOne(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	f.append(t, "a", "Add:1@x", "Skip@x")
	// v2 was applied by an older plugin.
	older := abi.Item{"pk": abi.S("Ledger#x"), "sk": abi.S("L"), "total": abi.N("5"), "rev": abi.N("2"),
		"checkpoints": abi.M(abi.Item{"Acct#a": abi.N("2")})}
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, older)))

	_, err := e.Rebuild(ctx, "a")

	require.NoError(t, err)
	row := f.row(t, "x")
	assert.Equal(t, "1", attr(row, "total"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "Acct#a"))
}

// The rows of one stream instance are rebuilt concurrently; each reads
// what it lacks on its own after a lost race (run with -race: they share
// no events slice).
func TestM9_TheRowsOfOneInstanceAreRebuiltIndependently(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	evs := f.append(t, "a", "Add:1@x", "Add:2@y", "Add:3@x") // three: the slice read has room to grow
	require.Len(t, e.ApplyBatch(ctx, inputs(evs...)).Rows, 2)
	var mu sync.Mutex
	live := map[string]bool{}
	f.logic.OnEvolve = func(req *abi.EvolveRequest) {
		if req.State != nil {
			return // the live feed's own evolve
		}
		row := rowOf(req.Events[0].Event)
		mu.Lock()
		defer mu.Unlock()
		if live[row] {
			return
		}
		live[row] = true // the live feed moves the row on before the rebuild writes
		more := f.append(t, "a", "Add:10@"+row)
		require.NoError(t, e.ApplyBatch(ctx, inputs(more...)).Rows[0].Err)
	}

	outs, err := e.Rebuild(ctx, "a")

	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.Greater(t, o.Attempts, 1)
	}
	x, y := f.row(t, "x"), f.row(t, "y")
	assert.Equal(t, "14", attr(x, "total"), "x holds its 1 and 3 and the 10 the live feed applied")
	assert.Equal(t, "12", attr(y, "total"), "y holds its 2 and the 10 the live feed applied")
}

// A row whose checkpoint field records no instance names none: RebuildRow
// without instances says so, and names what to give.
func TestM8_RebuildRowOfARowThatNamesNoInstanceAsksForThem(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRevision)
	require.NoError(t, e.ApplyBatch(ctx, inputs(f.append(t, "a", "Add:1@x")...)).Rows[0].Err)

	_, err := e.RebuildRow(ctx, testlogic.RowKey("x"), nil)

	require.ErrorIs(t, err, apply.ErrNoInstances)
	assert.ErrorContains(t, err, "--instance")
}
