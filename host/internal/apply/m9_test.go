package apply_test

import (
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
