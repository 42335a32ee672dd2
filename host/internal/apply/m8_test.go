package apply_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

func withOwnedField(p *apply.Projection) {
	p.Revision = &apply.Revision{Field: "rev"}
	p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner", Map: "checkpoints"}
}

func ref(streamID string) apply.InstanceRef {
	return apply.InstanceRef{Source: testlogic.Stream, StreamID: streamID}
}

// A row adopted by the wrong instance (b arrived first) is repaired: the
// field goes to the first instance in fold order, every checkpoint is
// written from scratch, the state re-derived, the revision bumped once.
func TestM8_RebuildRowGivesTheFieldToTheFirstInstanceInFoldOrder(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withOwnedField)
	a := f.append(t, "a", "Add:1@x", "Add:2@x", "Add:100@y")
	b := f.append(t, "b", "Add:10@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(b...)).Rows[0].Err)
	require.NoError(t, e.ApplyBatch(ctx, inputs(a[0], a[1])).Rows[0].Err)
	row := f.row(t, "x")
	require.Equal(t, "b", attr(row, "owner"), "b adopted the field")
	// Damage the state: a rebuild ignores it.
	row["total"] = abi.N("999")
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, row)))

	o, err := e.RebuildRow(ctx, testlogic.RowKey("x"), []apply.InstanceRef{ref("b"), ref("a")})

	require.NoError(t, err)
	assert.True(t, o.Written)
	row = f.row(t, "x")
	assert.Equal(t, "13", attr(row, "total"), "re-derived from initial")
	assert.Equal(t, "a", attr(row, "owner"), "the first instance in fold order owns the field")
	assert.Equal(t, "2", attr(row, "version"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#b"))
	assert.Equal(t, "<absent>", mapEntry(row, "checkpoints", "Acct#a"), "every checkpoint written from scratch")
	assert.Equal(t, "3", attr(row, "rev"), "the next revision")
	assert.Nil(t, f.row(t, "y"), "events of other rows are not applied")
	for _, in := range o.Instances {
		assert.Empty(t, in.Applied, "a rebuild reports no events, so it never replays side effects")
	}

	// A redelivery after the rebuild is already applied.
	o2 := e.ApplyBatch(ctx, inputs(a[1], b[0])).Rows[0]
	require.NoError(t, o2.Err)
	assert.False(t, o2.Written)
}

// Without instances, the row's checkpoints name them; only the named
// instances are folded.
func TestM8_RebuildRowFindsItsInstancesInTheRowsCheckpoints(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withOwnedField)
	a := f.append(t, "a", "Add:1@x")
	b := f.append(t, "b", "Add:10@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a[0], b[0])).Rows[0].Err)

	refs, after, err := e.InstancesOf(ctx, testlogic.RowKey("x"))
	require.NoError(t, err)
	assert.Equal(t, []apply.InstanceRef{ref("a"), ref("b")}, refs)
	assert.Equal(t, uint64(1), after[ref("b")])

	_, err = e.RebuildRow(ctx, testlogic.RowKey("x"), nil)
	require.NoError(t, err)
	assert.Equal(t, "11", attr(f.row(t, "x"), "total"))

	// Only a: b's part is gone, and so is its checkpoint.
	_, err = e.RebuildRow(ctx, testlogic.RowKey("x"), []apply.InstanceRef{ref("a")})
	require.NoError(t, err)
	row := f.row(t, "x")
	assert.Equal(t, "1", attr(row, "total"))
	assert.Equal(t, "<absent>", attr(row, "checkpoints"))

	_, err = e.RebuildRow(ctx, testlogic.RowKey("x"), []apply.InstanceRef{{Source: "nope", StreamID: "a"}})
	assert.ErrorContains(t, err, `no source "nope"; its sources are [Acct]`)
	_, err = e.RebuildRow(ctx, testlogic.RowKey("never"), nil)
	assert.ErrorIs(t, err, apply.ErrNoInstances)
}

// A configured SourcesOf finds the instances instead of the checkpoints.
func TestM8_SourcesOfFindsTheInstancesToRebuild(t *testing.T) {
	f := newFixture(t)
	var asked abi.Item
	e := f.engine(t, func(p *apply.Projection) {
		withMap(p)
		p.SourcesOf = func(_ context.Context, key abi.Item) ([]apply.InstanceRef, error) {
			asked = key
			return []apply.InstanceRef{ref("a"), ref("c")}, nil
		}
	})
	f.append(t, "a", "Add:1@x")
	f.append(t, "c", "Add:7@x") // never delivered

	_, err := e.RebuildRow(ctx, testlogic.RowKey("x"), nil)

	require.NoError(t, err)
	assert.Equal(t, testlogic.RowKey("x"), asked)
	row := f.row(t, "x")
	assert.Equal(t, "8", attr(row, "total"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#c"))
}

// CatchUpRow brings every instance the row's checkpoints know up to its
// head, in one write; events of other rows stay theirs.
func TestM8_CatchUpRowBringsEveryKnownInstanceToItsHead(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withOwnedField)
	a := f.append(t, "a", "Add:1@x")
	b := f.append(t, "b", "Add:10@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a[0], b[0])).Rows[0].Err)
	f.append(t, "a", "Add:2@x", "Add:50@y", "Add:4@x") // never delivered
	f.append(t, "b", "Add:20@x")

	o, err := e.CatchUpRow(ctx, testlogic.RowKey("x"))

	require.NoError(t, err)
	assert.Equal(t, int64(2), o.Revision, "one write")
	row := f.row(t, "x")
	assert.Equal(t, "37", attr(row, "total"))
	assert.Equal(t, "4", attr(row, "version"), "a's field passes y's version 3")
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "Acct#b"))
	assert.Nil(t, f.row(t, "y"))

	o, err = e.CatchUpRow(ctx, testlogic.RowKey("x"))
	require.NoError(t, err)
	assert.False(t, o.Written, "nothing new: nothing written")
}
