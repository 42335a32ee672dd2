package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/apply"
)

// weightLogNoMap is weightLog without the map: a second session of the
// source has nowhere to keep its checkpoint.
func weightLogNoMap(p *apply.Projection) {
	weightLog(p)
	p.Checkpoint.Map = ""
}

// instanceOf returns the outcome of the instance with the given stream id.
func instanceOf(t *testing.T, o apply.Outcome, streamID string) apply.Instance {
	t.Helper()
	for _, in := range o.Instances {
		if in.StreamID == streamID {
			return in
		}
	}
	t.Fatalf("no instance %s in the outcome: %+v", streamID, o.Instances)
	return apply.Instance{}
}

// An unowned field goes to the first instance of its source that writes
// it: w-1 comes first in fold order but only skips, so w-2, which applies,
// adopts weighSession / weighVersion, and the map stays absent. A later
// event of w-1 then gets an entry of its own in the map.
func TestM3_AnUnownedFieldGoesToTheFirstInstanceThatWritesIt(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, weightLog)
	w1 := f.append(t, "w-1", "Skip@sh-1")
	w2 := f.append(t, "w-2", "Add:5@sh-1")

	o := e.ApplyBatch(ctx, append(sourced("weigh", w1...), sourced("weigh", w2...)...)).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.Equal(t, "1", versions(instanceOf(t, o, "w-1").Skipped))
	assert.Equal(t, "1", versions(instanceOf(t, o, "w-2").Applied))
	row := f.row(t, "sh-1")
	assert.Equal(t, "5", attr(row, "total"))
	assert.Equal(t, "w-2", attr(row, "weighSession"), "the instance that writes adopts the field")
	assert.Equal(t, "0", attr(row, "weighVersion"), "w-2's version 1 with offset -1")
	assert.Equal(t, "<absent>", attr(row, "checkpoints"), "no instance landed in the map")

	// w-2 redelivered: already applied against the field it owns.
	o = e.ApplyBatch(ctx, sourced("weigh", w2...)).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1", versions(o.Instances[0].AlreadyApplied))

	// w-1 writes later: the field follows w-2, so w-1 goes to the map.
	more := f.append(t, "w-1", "Add:3@sh-1")
	o = e.ApplyBatch(ctx, sourced("weigh", more...)).Rows[0]
	require.NoError(t, o.Err)
	row = f.row(t, "sh-1")
	assert.Equal(t, "8", attr(row, "total"))
	assert.Equal(t, "w-2", attr(row, "weighSession"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "weigh#w-1"))
}

// Without a map the same race has one answer too: w-2, the instance that
// writes, adopts the unowned field instead of failing with
// ProjectionSourceConflict; w-1 wrote nothing and needs no checkpoint, so
// it does not fail either. Once w-1 writes, it conflicts, alone.
func TestM3_WithoutAMapTheInstanceThatWritesAdoptsTheUnownedField(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, weightLogNoMap)
	w1 := f.append(t, "w-1", "Skip@sh-1")
	w2 := f.append(t, "w-2", "Add:5@sh-1", "Add:2@sh-1")

	o := e.ApplyBatch(ctx, append(sourced("weigh", w1...), sourced("weigh", w2...)...)).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.NoError(t, instanceOf(t, o, "w-2").Err)
	assert.NoError(t, instanceOf(t, o, "w-1").Err, "w-1 only skipped: it needs no checkpoint")
	assert.Empty(t, o.FailedPositions())
	row := f.row(t, "sh-1")
	assert.Equal(t, "7", attr(row, "total"))
	assert.Equal(t, "w-2", attr(row, "weighSession"))
	assert.Equal(t, "1", attr(row, "weighVersion"))

	more := f.append(t, "w-1", "Add:100@sh-1")
	o = e.ApplyBatch(ctx, append(sourced("weigh", more...), sourced("weigh", w2[1])...)).Rows[0]
	require.NoError(t, o.Err, "w-2's redelivery did not fail")
	assert.ErrorIs(t, instanceOf(t, o, "w-1").Err, apply.ErrProjectionSourceConflict)
	assert.Equal(t, "7", attr(f.row(t, "sh-1"), "total"), "nothing of w-1 is folded")
}

// One instance's failure is its own. w-1's evolve fails and w-2 writes:
// w-2 adopts the unowned field and is written, w-1 alone is reported
// failed (with or without a map).
func TestM6_AFailedInstanceIsItsOwnAndTheInstanceThatWritesAdoptsTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*apply.Projection)
	}{{"map", weightLog}, {"no map", weightLogNoMap}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			e := f.engine(t, tc.mod)
			w1 := f.append(t, "w-1", "Fail@sh-1")
			w2 := f.append(t, "w-2", "Add:5@sh-1")
			in := sourced("weigh", w1[0], w2[0])
			in[1].Pos = 1

			o := e.ApplyBatch(ctx, in).Rows[0]

			require.NoError(t, o.Err, "the row fails only when every instance does")
			assert.True(t, o.Written)
			var ee *apply.EventError
			assert.ErrorAs(t, instanceOf(t, o, "w-1").Err, &ee)
			assert.NoError(t, instanceOf(t, o, "w-2").Err)
			assert.Equal(t, []int{0}, o.FailedPositions(), "w-1's record goes back to the source")
			row := f.row(t, "sh-1")
			assert.Equal(t, "5", attr(row, "total"))
			assert.Equal(t, "w-2", attr(row, "weighSession"))
			assert.Equal(t, "0", attr(row, "weighVersion"))
		})
	}
}

// When every instance with events fails, the row fails, and each instance
// still reports its own error: w-1 (the owner) its evolve failure, w-2 its
// conflict. An owner whose events are already applied has not failed, so a
// conflicting instance beside it fails alone.
func TestM6_EachInstanceReportsItsOwnFailureAndTheRowFailsOnlyWhenAllDo(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, weightLogNoMap)
	w1 := f.append(t, "w-1", "Add:1@sh-1", "Fail@sh-1")
	w2 := f.append(t, "w-2", "Add:5@sh-1")
	require.NoError(t, e.ApplyBatch(ctx, sourced("weigh", w1[0])).Rows[0].Err)
	require.Equal(t, "w-1", attr(f.row(t, "sh-1"), "weighSession"))

	o := e.ApplyBatch(ctx, append(sourced("weigh", w1[1]), sourced("weigh", w2...)...)).Rows[0]

	require.Error(t, o.Err, "every instance failed")
	assert.False(t, o.Written)
	var ee *apply.EventError
	assert.ErrorAs(t, instanceOf(t, o, "w-1").Err, &ee, "w-1's own failure")
	assert.ErrorIs(t, instanceOf(t, o, "w-2").Err, apply.ErrProjectionSourceConflict, "w-2's own failure")
	assert.NotErrorIs(t, instanceOf(t, o, "w-1").Err, apply.ErrProjectionSourceConflict)

	o = e.ApplyBatch(ctx, append(sourced("weigh", w1[0]), sourced("weigh", w2...)...)).Rows[0]
	require.NoError(t, o.Err, "w-1 has events and did not fail")
	assert.False(t, o.Written)
	assert.Equal(t, "1", versions(instanceOf(t, o, "w-1").AlreadyApplied))
	assert.ErrorIs(t, instanceOf(t, o, "w-2").Err, apply.ErrProjectionSourceConflict)
	assert.Equal(t, "1", attr(f.row(t, "sh-1"), "total"))
}
