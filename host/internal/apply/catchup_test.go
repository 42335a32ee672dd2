package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

func TestP11_CatchUpBringsTheRowToTheHead(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Add:2", "Add:3")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)

	o, err := e.CatchUp(ctx, "a")

	require.NoError(t, err)
	assert.Equal(t, "2,3", versions(o.Applied()))
	assert.Equal(t, "3", attr(f.row(t, "a"), "version"))
	assert.Equal(t, "6", attr(f.row(t, "a"), "total"))
}

func TestP11_CatchUpTargetsTheLatestEventThatAddressesARow(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	f.append(t, "s", "Add:1@x", "Add:2@y", "Add:3@") // the last addresses no row

	o, err := e.CatchUp(ctx, "s")

	require.NoError(t, err)
	assert.Equal(t, "2", versions(o.Applied()))
	assert.Equal(t, "2", attr(f.row(t, "y"), "total"))
	assert.Nil(t, f.row(t, "x"), "catchUp brings only the row of the latest addressed event")
}

func TestP11_CatchUpWithoutAnyAddressedEventSaysSo(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	f.append(t, "s", "Add:1@")

	_, err := e.CatchUp(ctx, "s")

	require.ErrorIs(t, err, apply.ErrNoRow)
}

func TestP11_RebuildIgnoresTheRowsStateAndReturnsNoEvents(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "s", "Add:1@x", "Add:2@y", "Add:3@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs...)).Rows[0].Err)
	// A changed evolve (here: a corrupted row) is repaired by the rebuild.
	corrupt := f.row(t, "x")
	corrupt["total"] = abi.N("999")
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, corrupt)))

	outs, err := e.Rebuild(ctx, "s")

	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.True(t, o.Written)
		assert.Empty(t, o.Applied(), "a rebuild never replays side effects")
	}
	assert.Equal(t, "4", attr(f.row(t, "x"), "total"))
	assert.Equal(t, "1,3", attr(f.row(t, "x"), "log"))
	assert.Equal(t, "3", attr(f.row(t, "x"), "version"))
	assert.Equal(t, "2", attr(f.row(t, "y"), "total"))
}
