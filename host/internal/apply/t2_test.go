package apply_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// racingDB runs race once, right before the first PutItem it passes on:
// another writer changing the item between CreateRow's read and write.
type racingDB struct {
	store.DB
	once sync.Once
	race func()
}

func (d *racingDB) PutItem(ctx context.Context, p store.Put) error {
	d.once.Do(d.race)
	return d.DB.PutItem(ctx, p)
}

// Without a revision the checkpoint field guards a create over a
// tombstone: a create that lost a race with the projection (a later event
// moved the tombstone's checkpoint) reads the tombstone again and carries
// the checkpoint it has now, so no event is folded twice.
func TestT2_ACreateOverATombstoneThatLostARaceCarriesTheNewCheckpoint(t *testing.T) {
	f := newFixture(t)
	c := &clock{now: t0}
	e := f.engine(t, func(p *apply.Projection) {
		p.Removal = &apply.Removal{EntityType: "LedgerRow"}
		p.Now = c.Now
	})
	evs := f.append(t, "x", "Add:1", "Close", "Skip", "Close")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0], evs[1])).Rows[0].Err)
	require.Equal(t, "2", attr(f.row(t, "x"), "version"))
	racing := &racingDB{DB: f.db, race: func() {
		// v3 skips, v4 removes again: the tombstone's checkpoint moves to 4.
		o := e.ApplyBatch(ctx, inputs(evs[3])).Rows[0]
		require.NoError(t, o.Err)
		require.True(t, o.Written)
	}}
	creator, err := apply.New(e.Projection(), racing, reader{f})
	require.NoError(t, err)
	item := testlogic.RowKey("x")
	item["total"] = abi.N("40")

	written, err := creator.CreateRow(ctx, item)

	require.NoError(t, err)
	assert.Equal(t, "4", attr(written, "version"), "the checkpoint read after the lost race")
	row := f.row(t, "x")
	assert.Equal(t, "4", attr(row, "version"))
	assert.False(t, apply.IsTombstone(row))
	assert.Equal(t, t0.Format("2006-01-02T15:04:05Z07:00"), attr(row, "createdAt"))
	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "every event is already applied")
	assert.Equal(t, "40", attr(f.row(t, "x"), "total"))
}
