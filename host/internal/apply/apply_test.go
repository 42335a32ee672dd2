package apply_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var ctx = context.Background()

func TestP7_InOrderBatchIsOneWriteAndNoRead(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.ReadNewRows = true })
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3")
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs...))

	require.Len(t, res.Rows, 1)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.Equal(t, "1,2,3", versions(o.Applied()))
	counts := f.db.Counts()
	assert.Equal(t, int64(1), counts["PutItem"], "k events of a row cost one write")
	assert.Equal(t, int64(1), counts["BatchGetItem"])
	assert.Zero(t, counts["Query"], "a batch holding every version needs no gap read")
	row := f.row(t, "a")
	assert.Equal(t, "6", attr(row, "total"))
	assert.Equal(t, "3", attr(row, "version"))
	assert.Equal(t, "12", attr(row, "doubled"), "toItem's attribute is written")
}

func TestP7_GapFillOneQuery(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3", "Add:4", "Add:5")
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs[4]))

	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "1,2,3,4,5", versions(o.Applied()), "applied includes the gap-filled events, in version order")
	assert.Equal(t, int64(1), f.db.Counts()["Query"], "one bounded consistent read fills the gap")
	assert.Equal(t, "1,2,3,4,5", attr(f.row(t, "a"), "log"))
}

func TestP7_ShuffledDuplicatedBatchSortsAndDedupes(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3")
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs[2], evs[0], evs[1], evs[1], evs[0]))

	require.NoError(t, res.Rows[0].Err)
	assert.Equal(t, "1,2,3", attr(f.row(t, "a"), "log"))
	assert.Equal(t, int64(1), f.db.Counts()["PutItem"])
	assert.Zero(t, f.db.Counts()["Query"])
}

func TestP7_RedeliveryIsAlreadyAppliedAndNotWritten(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs...)).Rows[0].Err)
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs[1], evs[2]))

	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Empty(t, o.Applied())
	assert.Equal(t, "2,3", versions(o.Instances[0].AlreadyApplied))
	assert.Zero(t, f.db.Counts()["PutItem"])
}

func TestP1_KeyNoneIsIgnoredWithoutReadOrWrite(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1@")
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(evs...))

	assert.Empty(t, res.Rows)
	require.Len(t, res.Ignored, 1)
	assert.Equal(t, 0, res.Ignored[0].Pos)
	assert.Empty(t, f.db.Counts(), "nothing is read or written")
}

func TestP3_SkipLeavesTheRowAndTheCheckpointBelow(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Skip", "Add:2", "Skip")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, "1,3", versions(o.Applied()))
	assert.Equal(t, "2,4", versions(o.Instances[0].Skipped))
	row := f.row(t, "a")
	assert.Equal(t, "3", attr(row, "version"), "the checkpoint stops at the last applied event; skip 4 above it is decided again later")
	assert.Equal(t, "3", attr(row, "total"))
}

func TestP3_AllSkippedRowIsNotWritten(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Skip", "Skip")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Nil(t, f.row(t, "a"))
}

func TestP3_RejectedAloneNeverCreatesARow(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Reject", "Reject")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]
	require.NoError(t, o.Err)
	assert.Len(t, o.Instances[0].Rejected, 2)
	assert.Nil(t, f.row(t, "a"))

	// A later delivery gap-reads from version 1 and reports the rejections again.
	more := f.append(t, "a", "Add:5")
	o = e.ApplyBatch(ctx, inputs(more...)).Rows[0]
	require.NoError(t, o.Err)
	assert.Len(t, o.Instances[0].Rejected, 2)
	assert.Equal(t, "3", versions(o.Applied()))
	assert.Equal(t, "3", attr(f.row(t, "a"), "version"))
}

func TestP3_RejectionOnExistingRowMovesTheCheckpoint(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs...)).Rows[0].Err)
	more := f.append(t, "a", "Reject")

	o := e.ApplyBatch(ctx, inputs(more...)).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.Equal(t, "2", attr(f.row(t, "a"), "version"))
	assert.Equal(t, "1", attr(f.row(t, "a"), "total"))
}

func TestP8_AFailedRowDoesNotHideTheOthers(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	bad := f.append(t, "bad", "Add:1", "Fail")
	good := f.append(t, "good", "Add:7")

	res := e.ApplyBatch(ctx, inputs(append(bad, good...)...))

	require.Len(t, res.Rows, 2)
	var failed, ok int
	for _, o := range res.Rows {
		if o.Failed() {
			failed++
			var ee *apply.EventError
			require.True(t, errors.As(o.Err, &ee), "the row's error carries the failing event: %v", o.Err)
			assert.Equal(t, uint64(2), ee.Event.Version)
			assert.Equal(t, []int{0, 1}, o.Positions)
		} else {
			ok++
		}
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, 1, ok)
	assert.Nil(t, f.row(t, "bad"), "a failed row is not written")
	assert.Equal(t, "7", attr(f.row(t, "good"), "total"))
}

func TestP4_CheckpointOffsetMapsReadsAndConditions(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.Checkpoint.Offset = -1 })
	evs := f.append(t, "a", "Add:1", "Add:2")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)
	assert.Equal(t, "0", attr(f.row(t, "a"), "version"), "stored = version + offset")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, "1", versions(o.Instances[0].AlreadyApplied), "the stored 0 reads back as version 1")
	assert.Equal(t, "1", attr(f.row(t, "a"), "version"))
	assert.Equal(t, "3", attr(f.row(t, "a"), "total"))
}

func TestP4_LegacyRowWithoutCheckpointAppliesEverything(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	legacy := testlogic.RowKey("a")
	legacy["total"], legacy["count"], legacy["log"], legacy["hidden"] = abi.N("100"), abi.N("0"), abi.S(""), abi.S("keep me")
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, legacy)))
	evs := f.append(t, "a", "Add:1")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	row := f.row(t, "a")
	assert.Equal(t, "101", attr(row, "total"))
	assert.Equal(t, "1", attr(row, "version"))
	assert.Equal(t, "keep me", attr(row, "hidden"), "the row's other attributes are read and kept (P5)")
}

func TestP5_CreatedAtIsKept(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)
	created := attr(f.row(t, "a"), "createdAt")
	require.NotEqual(t, "<absent>", created)

	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[1])).Rows[0].Err)

	assert.Equal(t, created, attr(f.row(t, "a"), "createdAt"))
}

func TestP9_RowsKeyedByEventFieldsKeepTheirOwnCheckpoints(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "s", "Add:1@x", "Add:10@y", "Add:2@x", "Add:20@y")

	// Deliver only the last event: the gap read keeps only the row's events.
	res := e.ApplyBatch(ctx, inputs(evs[3]))
	require.Len(t, res.Rows, 1)
	require.NoError(t, res.Rows[0].Err)
	assert.Equal(t, "2,4", versions(res.Rows[0].Applied()))
	assert.Equal(t, "30", attr(f.row(t, "y"), "total"))
	assert.Equal(t, "4", attr(f.row(t, "y"), "version"))
	assert.Nil(t, f.row(t, "x"), "an event addressing another row leaves that row as it was")

	res = e.ApplyBatch(ctx, inputs(evs[2]))
	require.NoError(t, res.Rows[0].Err)
	assert.Equal(t, "1,3", versions(res.Rows[0].Applied()))
	assert.Equal(t, "3", attr(f.row(t, "x"), "total"))
}

func TestY4_RowsAreReadWithBatchGet(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.ReadNewRows = true })
	var all []abi.Event
	for i := 0; i < 150; i++ {
		all = append(all, f.append(t, "r"+itoa(i), "Add:1")...)
	}
	f.db.ResetCounts()

	res := e.ApplyBatch(ctx, inputs(all...))

	for _, o := range res.Rows {
		require.NoError(t, o.Err)
	}
	counts := f.db.Counts()
	assert.Equal(t, int64(2), counts["BatchGetItem"], "150 rows cost ceil(150/100) reads")
	assert.Zero(t, counts["GetItem"])
	assert.Equal(t, int64(150), counts["PutItem"])
}

func TestP8_ApplyReturnsTheRowsFailureAsItsError(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	ok := f.append(t, "a", "Add:4")
	bad := f.append(t, "b", "Fail")
	none := f.append(t, "c", "Add:1@")

	o, err := e.Apply(ctx, apply.Input{Event: ok[0], Pos: -1})
	require.NoError(t, err)
	assert.Equal(t, "1", versions(o.Applied()))

	o, err = e.Apply(ctx, apply.Input{Event: bad[0], Pos: -1})
	var ee *apply.EventError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "Boom", ee.Err.Tag)
	assert.True(t, o.Failed())

	o, err = e.Apply(ctx, apply.Input{Event: none[0], Pos: -1})
	require.NoError(t, err)
	assert.Nil(t, o, "an event that addresses no row has no outcome")
}

func TestP12_SideEffectContractAppliedOnceInOrderAlreadyAppliedForRepublish(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3", "Add:4")

	// v3 arrives first: the gap-fill applies 1, 2 and 3, in version order.
	first := e.ApplyBatch(ctx, inputs(evs[2])).Rows[0]
	require.NoError(t, first.Err)
	assert.Equal(t, "1,2,3", versions(first.Applied()))

	// v1 and v2 arrive in their own right: the row already had them.
	second := e.ApplyBatch(ctx, inputs(evs[1], evs[0], evs[3])).Rows[0]
	require.NoError(t, second.Err)
	assert.Equal(t, "4", versions(second.Applied()), "applied is at most once across calls")
	assert.Equal(t, "1,2", versions(second.Instances[0].AlreadyApplied), "alreadyApplied lists the batch's events the row had, for at-least-once republishing")
}

// rangeReader is the event store's reader recording the ranges read.
type rangeReader struct {
	reader
	mu     sync.Mutex
	ranges []string
}

func (r *rangeReader) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, fmt.Sprintf("%s(%d,%d]", streamID, after, to))
	r.mu.Unlock()
	return r.reader.ReadFrom(ctx, stream, streamID, after, to)
}

// TestP7_GapFillReadsUpToTheLastVersionTheBatchLacks: above the last
// version the batch lacks, the batch brings every version (this row's
// events, another row's, one of no row), so the gap read stops there; the
// row folds the events read and the batch's, and its checkpoint passes the
// other rows' versions as before.
func TestP7_GapFillReadsUpToTheLastVersionTheBatchLacks(t *testing.T) {
	f := newFixture(t)
	rr := &rangeReader{reader: reader{f}}
	p := apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: testlogic.Stream, Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "version"}, Logic: f.logic,
	}
	e, err := apply.New(p, f.db, rr)
	require.NoError(t, err)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3", "Add:4@b", "Add:5", "Add:6@", "Add:7", "Add:8")

	res := e.ApplyBatch(ctx, inputs(evs[1], evs[3], evs[4], evs[5], evs[6], evs[7]))

	for _, o := range res.Rows {
		require.NoError(t, o.Err)
	}
	assert.Equal(t, "1,2,3,5,7,8", attr(f.row(t, "a"), "log"), "the events read (1, 3) and the batch's (2, 5, 7, 8)")
	assert.Equal(t, "4", attr(f.row(t, "b"), "log"))
	assert.Equal(t, "8", attr(f.row(t, "a"), "version"), "past 4 (row b) and 6 (no row)")
	assert.Equal(t, "4", attr(f.row(t, "b"), "version"))
	assert.ElementsMatch(t, []string{"a(0,3]", "a(0,3]"}, rr.ranges, "each row reads up to version 3, the last the batch lacks, not to its last version")
}
