package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// latest configures the ledger's one source in latest mode, with a
// revision and a checkpoint map.
func latest(p *apply.Projection) {
	withMap(p)
	p.Sources[0].Mode = abi.ModeLatest
}

// sourced routes events to one source of the projection.
func sourced(source string, evs ...abi.Event) []apply.Input {
	out := make([]apply.Input, len(evs))
	for i, ev := range evs {
		out[i] = apply.Input{Source: source, Event: ev, Pos: i}
	}
	return out
}

func TestM2_LatestFoldsOnlyTheNewestEventAndReadsNothing(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, latest)
	evs := f.append(t, "s", "Add:1@x", "Add:2@x", "Add:4@x", "Add:8@x")
	f.db.ResetCounts()

	// v1 and v3 are missing from the batch: latest mode does not fill gaps.
	o := e.ApplyBatch(ctx, inputs(evs[3], evs[1])).Rows[0]

	require.NoError(t, o.Err)
	assert.Zero(t, f.db.Counts()["Query"], "nothing is read from the event store")
	assert.Equal(t, int64(1), f.logic.EvolveCalls.Load(), "one evolve call")
	require.Len(t, o.Instances, 1)
	in := o.Instances[0]
	assert.Equal(t, "4", versions(in.Applied))
	assert.Equal(t, "2", versions(in.Superseded), "the older event of the batch is superseded")
	assert.Equal(t, uint64(4), in.Version)
	row := f.row(t, "x")
	assert.Equal(t, "8", attr(row, "total"))
	assert.Equal(t, "4", attr(row, "log"))
	assert.Equal(t, "4", mapEntry(row, "checkpoints", "Acct#s"))

	// A redelivery of older versions is already applied.
	o = e.ApplyBatch(ctx, inputs(evs[0], evs[2])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1,3", versions(o.Instances[0].AlreadyApplied))
}

func TestM2_ARejectedOrSkippedNewestEventFallsBackToTheNextOlder(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, latest)
	evs := f.append(t, "s", "Add:1@x", "Add:2@x", "Skip@x", "Reject@x")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	in := o.Instances[0]
	assert.Equal(t, "2", versions(in.Applied), "v4 rejected, v3 skipped, v2 accepted")
	require.Len(t, in.Rejected, 1)
	assert.Equal(t, uint64(4), in.Rejected[0].Event.Version)
	assert.Equal(t, "3", versions(in.Skipped))
	assert.Equal(t, "1", versions(in.Superseded), "only the events older than the accepted one")
	assert.Equal(t, uint64(4), in.Version, "the rejected v4 is considered: the checkpoint passes it")
	row := f.row(t, "x")
	assert.Equal(t, "2", attr(row, "total"))
	assert.Equal(t, "4", mapEntry(row, "checkpoints", "Acct#s"))
}

// A skipped newest event is not covered by the checkpoint: it stops at the
// accepted older one, and the skipped event is decided again later.
func TestM2_ASkippedNewestEventIsDecidedAgainLater(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, latest)
	evs := f.append(t, "s", "Add:1@x", "Add:5@x", "Skip@x")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "2", versions(o.Instances[0].Applied))
	assert.Equal(t, "1", versions(o.Instances[0].Superseded))
	assert.Equal(t, "2", mapEntry(f.row(t, "x"), "checkpoints", "Acct#s"))

	o = e.ApplyBatch(ctx, inputs(evs[2])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "skipped events alone never write")
	assert.Equal(t, "3", versions(o.Instances[0].Skipped), "decided again, not already applied")
	assert.Equal(t, "5", attr(f.row(t, "x"), "total"))
}

// When every event of the batch is skipped, nothing is written and nothing
// is superseded.
func TestM2_AllSkippedWritesNothing(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, latest)
	evs := f.append(t, "s", "Skip@x", "Skip@x")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1,2", versions(o.Instances[0].Skipped))
	assert.Empty(t, o.Instances[0].Superseded)
	assert.Nil(t, f.row(t, "x"))
}

// A latest-mode source next to a fold-mode one: the fold source is
// gap-filled and folded in full, the latest one contributes its newest
// event, all in one write.
func TestM2_LatestAndFoldSourcesShareOneWrite(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		withMap(p)
		p.Sources = []apply.Source{{Name: "order", Stream: "Acct"}, {Name: "scan", Stream: "Acct", Mode: abi.ModeLatest}}
	})
	o1 := f.append(t, "o1", "Add:1@x", "Add:2@x")
	s1 := f.append(t, "s1", "Add:10@x", "Add:20@x", "Add:40@x")

	in := append(sourced("order", o1[1]), sourced("scan", s1[2], s1[0])...)
	o := e.ApplyBatch(ctx, in).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, int64(1), o.Revision, "one write")
	row := f.row(t, "x")
	assert.Equal(t, "43", attr(row, "total"), "order v1 (gap-filled) and v2, scan v3 only")
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "order#o1"))
	assert.Equal(t, "3", mapEntry(row, "checkpoints", "scan#s1"))
	for _, i := range o.Instances {
		if i.Source == "scan" {
			assert.Equal(t, "1", versions(i.Superseded))
		} else {
			assert.Equal(t, "1,2", versions(i.Applied))
		}
	}
}
