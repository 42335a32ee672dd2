package apply_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// withOutbox is a projection with a revision, a checkpoint map, removal
// and an outbox in the row's partition, whose applied events carry n
// effects each.
func withOutbox(f *fixture, n int, mod func(*apply.Projection)) (func(*apply.Projection), *testlogic.Effects) {
	fx := testlogic.WithEffects(f.logic, n)
	return func(p *apply.Projection) {
		p.Logic = fx
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Map: "checkpoints"}
		p.Removal = &apply.Removal{EntityType: "LedgerRow"}
		p.Outbox = &apply.Outbox{EntityType: "LedgerRow"}
		if mod != nil {
			mod(p)
		}
	}, fx
}

// outboxItems returns the outbox items of row name in table, in sort key
// order (a strongly consistent query of the row's partition).
func outboxItems(t *testing.T, f *fixture, table, hash, prefix string) []abi.Item {
	t.Helper()
	page, err := f.db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :h AND begins_with(sk, :p)",
		Values: map[string]abi.Value{":h": abi.S(hash), ":p": abi.S(prefix)}})
	require.NoError(t, err)
	return page.Items
}

func TestO1_EffectsCommitWithTheRowInOneTransaction(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 2, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Skip@x", "Reject@x", "Add:2@x")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 4, o.Enqueued, "two effects for each of the two applied events; skipped and rejected ones have none")
	counts := f.db.Counts()
	assert.Equal(t, int64(1), counts["TransactWriteItems"])
	assert.Zero(t, counts["PutItem"])
	items := outboxItems(t, f, f.table, "Ledger#x", "L#outbox#")
	require.Len(t, items, 4)
	layout, _ := e.Projection().OutboxLayout()
	var got []string
	for _, it := range items {
		assert.Equal(t, "LedgerRow#outbox", it[apply.MarkerAttr].Str)
		assert.Equal(t, "a", it[apply.OutboxAttrStreamID].Str)
		assert.Equal(t, testlogic.Stream, it[apply.OutboxAttrStream].Str)
		assert.Equal(t, "1", it[apply.OutboxAttrRevision].Str)
		assert.Equal(t, layout.IndexBucket(keys.String(testlogic.RowKey("x"))), it[apply.OutboxIndexPK].Str, "the row's bucket of the index")
		assert.True(t, strings.HasPrefix(it[apply.OutboxIndexPK].Str, "ledger#"))
		assert.Equal(t, testlogic.RowKey("x"), it[apply.OutboxAttrRowKey].Map)
		got = append(got, it[apply.OutboxAttrVersion].Str+"."+it[apply.OutboxAttrIndex].Str+"="+it[apply.OutboxAttrValue].Map["version"].Str)
	}
	assert.Equal(t, []string{"1.0=1", "1.1=1", "4.0=4", "4.1=4"}, got, "fold order, then index")
	// An entity read sees the row, never an outbox item.
	row, ok, err := e.Row(ctx, testlogic.RowKey("x"))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "3", attr(row, "total"))
}

func TestO1_AWriteWithoutEffectsStaysOnePutItem(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 0, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:2@x")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Zero(t, o.Enqueued)
	counts := f.db.Counts()
	assert.Equal(t, int64(1), counts["PutItem"])
	assert.Zero(t, counts["TransactWriteItems"])
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"))
}

func TestO1_MoreThan99EffectsOfOneEventFailTheRowNamingIt(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 100, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:2@x")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.Error(t, o.Err)
	assert.True(t, errors.Is(o.Err, apply.ErrTooManyEffects))
	assert.Contains(t, o.Err.Error(), "pk=Ledger#x,sk=L")
	assert.Contains(t, o.Err.Error(), "100 effects")
	assert.Nil(t, f.row(t, "x"), "nothing was written")
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"))

	// 99 are committed.
	mod, _ = withOutbox(f, 99, nil)
	o = f.engine(t, mod).ApplyBatch(ctx, inputs(evs[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 99, o.Enqueued)
	assert.Len(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"), 99)
}

func TestO1_ATombstoneWriteCarriesItsEffects(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Close@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs[1])).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Removed)
	assert.Equal(t, 1, o.Enqueued)
	assert.Equal(t, int64(1), f.db.Counts()["TransactWriteItems"])
	assert.True(t, apply.IsTombstone(f.row(t, "x")))
	items := outboxItems(t, f, f.table, "Ledger#x", "L#outbox#")
	require.Len(t, items, 2)
	assert.Equal(t, "2", items[1][apply.OutboxAttrVersion].Str)
	assert.Equal(t, "2", items[1][apply.OutboxAttrRevision].Str, "committed with the tombstone's revision")
}

func TestO1_ALostRaceRetriesTheTransaction(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x")
	other := f.append(t, "b", "Add:10@x")
	raced := false
	f.logic.OnEvolve = func(req *abi.EvolveRequest) {
		if !raced {
			raced = true // another writer commits the row between our read and write
			require.NoError(t, f.engine(t, mod).ApplyBatch(ctx, inputs(other...)).Rows[0].Err)
		}
	}

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Attempts)
	assert.Equal(t, 1, o.Enqueued)
	assert.Equal(t, "11", attr(f.row(t, "x"), "total"))
	items := outboxItems(t, f, f.table, "Ledger#x", "L#outbox#")
	require.Len(t, items, 2, "one effect per committed write, none from the lost attempt")
	assert.Equal(t, []string{"b", "a"}, []string{items[0][apply.OutboxAttrStreamID].Str, items[1][apply.OutboxAttrStreamID].Str}, "commit order")
}

func TestO1_OutboxNeedsARevisionAndASortKey(t *testing.T) {
	f := newFixture(t)
	base := apply.Projection{Name: "p", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.logic,
		Sources: []apply.Source{{Stream: testlogic.Stream}}, Checkpoint: apply.Checkpoint{Field: "version"},
		Outbox: &apply.Outbox{EntityType: "E"}}
	_, err := apply.New(base, f.db, reader{f})
	require.ErrorIs(t, err, apply.ErrConfig)
	assert.Contains(t, err.Error(), "revision")

	base.Revision = &apply.Revision{Field: "rev"}
	base.KeyAttrs = []string{"pk"}
	_, err = apply.New(base, f.db, reader{f})
	require.ErrorIs(t, err, apply.ErrConfig)
	assert.Contains(t, err.Error(), "outbox.table")

	base.Outbox.Table = "other"
	_, err = apply.New(base, f.db, reader{f})
	require.NoError(t, err)
}

func TestO4_ItemsGoToAnotherTableInTheSameTransaction(t *testing.T) {
	f := newFixture(t)
	obTable := f.env.Table(t, "outbox", false)
	mod, _ := withOutbox(f, 1, func(p *apply.Projection) { p.Outbox.Table = obTable })
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:2@x")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Enqueued)
	assert.Equal(t, int64(1), f.db.Counts()["TransactWriteItems"])
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"), "nothing in the read-model table")
	items := outboxItems(t, f, obTable, "ledger#pk=Ledger#x,sk=L", "")
	require.Len(t, items, 2)
	assert.True(t, strings.HasSuffix(items[1]["sk"].Str, "#001"), items[1]["sk"].Str)
}
