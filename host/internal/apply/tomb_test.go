package apply_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var (
	t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// clock is a settable Now for the engine.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// withRemoval is a multi-instance projection with every checkpoint kind
// (field, instance field, map), a revision, createdAt, writtenBy and
// removal.
func withRemoval(c *clock, ttl time.Duration) func(*apply.Projection) {
	return func(p *apply.Projection) {
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner", Map: "checkpoints"}
		p.WrittenBy = "writtenBy"
		p.Removal = &apply.Removal{EntityType: "LedgerRow"}
		if ttl > 0 {
			p.Removal.TTL, p.Removal.TTLAttribute = ttl, "expiresAt"
		}
		p.Now = c.Now
	}
}

// removedRow writes row x from instances s1 (v1, v2) and s2 (v1), then
// removes it with s1 v3 ("Close"). It returns s1's and s2's events.
func removedRow(t *testing.T, f *fixture, e *apply.Engine) (s1, s2 []abi.Event) {
	t.Helper()
	s1 = f.append(t, "s1", "Add:1@x", "Add:2@x", "Close@x")
	s2 = f.append(t, "s2", "Add:5@x")
	o := e.ApplyBatch(ctx, inputs(s1[0], s1[1], s2[0])).Rows[0]
	require.NoError(t, o.Err)
	require.Equal(t, "8", attr(f.row(t, "x"), "total"))
	require.Equal(t, int64(1), o.Revision)
	o = e.ApplyBatch(ctx, inputs(s1[2])).Rows[0]
	require.NoError(t, o.Err)
	return s1, s2
}

func tombstoneOf(name string, extra abi.Item) abi.Item {
	it := testlogic.RowKey(name)
	it["__edd_e__"] = abi.S("LedgerRow#tombstone")
	for k, v := range extra {
		it[k] = v
	}
	return it
}

// removeRow makes the row a tombstone: the key, the marker, the checkpoints
// (field, instance field, map) and the revision one higher, nothing else —
// no state, no createdAt, no writtenBy.
func TestT1_RemoveRowWritesATombstoneKeepingOnlyTheCheckpointsAndRevision(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRemoval(&clock{t0}, 0))
	s1 := f.append(t, "s1", "Add:1@x", "Add:2@x", "Close@x")
	s2 := f.append(t, "s2", "Add:5@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(s1[0], s1[1], s2[0])).Rows[0].Err)
	require.Equal(t, "8", attr(f.row(t, "x"), "total"))
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(s1[2])).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.True(t, o.Removed, "the outcome reports the removal")
	assert.Nil(t, o.State, "a tombstone is no row")
	assert.Equal(t, int64(2), o.Revision)
	assert.Equal(t, "3", versions(o.Applied()), "the removing event is applied")
	assert.Equal(t, int64(1), f.db.Counts()["PutItem"], "the tombstone is one write")
	assert.Equal(t, tombstoneOf("x", abi.Item{
		"version":     abi.N("3"),
		"owner":       abi.S("s1"),
		"checkpoints": abi.M(abi.Item{"Acct#s2": abi.N("1")}),
		"rev":         abi.N("2"),
	}), f.row(t, "x"))
}

// A single-source projection without revision: the tombstone keeps the
// checkpoint field (with its offset), and is guarded by it.
func TestT1_ASingleSourceTombstoneKeepsTheCheckpointField(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Checkpoint.Offset = 100
		p.Removal = &apply.Removal{EntityType: "LedgerRow"}
	})
	evs := f.append(t, "a", "Add:1", "Close")

	o := e.ApplyBatch(ctx, inputs(evs[0])).Rows[0]
	require.NoError(t, o.Err)
	o = e.ApplyBatch(ctx, inputs(evs[1])).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Removed)
	assert.Equal(t, tombstoneOf("a", abi.Item{"version": abi.N("102")}), f.row(t, "a"))
}

// Without removal configured, removeRow fails the row, which stays as it was.
func TestT1_RemoveRowWithoutRemovalFailsTheRow(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "a", "Add:1", "Close")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)

	o := e.ApplyBatch(ctx, inputs(evs[1])).Rows[0]

	require.Error(t, o.Err)
	assert.Contains(t, o.Err.Error(), "no removal configured")
	assert.False(t, o.Removed)
	assert.Equal(t, "1", attr(f.row(t, "a"), "total"))
}

// A tombstone reads as absent: the engine's Row and the outcome of a call
// that writes nothing.
func TestT2_ATombstoneReadsAsAbsent(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRemoval(&clock{t0}, 0))
	removedRow(t, f, e)
	require.NotNil(t, f.row(t, "x"), "the tombstone is stored")

	it, ok, err := e.Row(ctx, testlogic.RowKey("x"))
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, it)

	skip := f.append(t, "s2", "Skip@x")
	o := e.ApplyBatch(ctx, inputs(skip[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.True(t, o.Removed, "the row is still a tombstone")
	assert.Nil(t, o.State)
}

// A redelivery of the events before the removal, and of the removal, is
// already applied: the tombstone stays, never resurrected.
func TestT2_ARedeliveryNeverResurrectsATombstone(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRemoval(&clock{t0}, 0))
	s1, s2 := removedRow(t, f, e)
	tomb := f.row(t, "x")
	require.True(t, apply.IsTombstone(tomb))

	for _, batch := range [][]abi.Event{{s1[0]}, {s1[1], s1[0]}, {s2[0]}, {s1[2]}, {s1[2], s2[0], s1[0], s1[1]}} {
		o := e.ApplyBatch(ctx, inputs(batch...)).Rows[0]
		require.NoError(t, o.Err)
		assert.False(t, o.Written, "redelivery of %s", versions(batch))
		assert.True(t, o.Removed)
		assert.Empty(t, o.Applied())
		var already []abi.Event
		for _, in := range o.Instances {
			already = append(already, in.AlreadyApplied...)
		}
		assert.Len(t, already, len(batch), "every redelivered event is already applied")
		assert.Equal(t, tomb, f.row(t, "x"), "the tombstone is unchanged")
	}
}

// A row created and removed in one call leaves a tombstone, so a
// redelivery of its creating event cannot create it.
func TestT2_ARowCreatedAndRemovedInOneCallLeavesATombstone(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.Removal = &apply.Removal{EntityType: "LedgerRow"} })
	evs := f.append(t, "a", "Add:1", "Close")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]
	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.True(t, o.Removed)
	assert.Equal(t, tombstoneOf("a", abi.Item{"version": abi.N("2")}), f.row(t, "a"))

	o = e.ApplyBatch(ctx, inputs(evs[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1", versions(o.Instances[0].AlreadyApplied))
	assert.True(t, apply.IsTombstone(f.row(t, "a")))
}

// A later event starts the row again from initial, over the tombstone: its
// checkpoints are carried over, the revision is one higher, createdAt is
// new; a redelivery of the older events is then already applied.
func TestT3_ALaterEventStartsTheRowAgainFromInitial(t *testing.T) {
	f := newFixture(t)
	c := &clock{t0}
	e := f.engine(t, withRemoval(c, 0))
	s1, s2 := removedRow(t, f, e)
	c.now = t1
	later := f.append(t, "s1", "Add:7@x")

	o := e.ApplyBatch(ctx, inputs(later[0])).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.False(t, o.Removed)
	assert.Equal(t, int64(3), o.Revision)
	assert.Equal(t, abi.Item{
		"pk": abi.S("Ledger#x"), "sk": abi.S("L"),
		"total": abi.N("7"), "count": abi.N("1"), "log": abi.S("4"), "doubled": abi.N("14"),
		"version": abi.N("4"), "owner": abi.S("s1"),
		"checkpoints": abi.M(abi.Item{"Acct#s2": abi.N("1")}),
		"rev":         abi.N("3"),
		"createdAt":   abi.S(t1.Format(time.RFC3339Nano)),
		"writtenBy":   abi.S("ledger@1.0.0"),
	}, f.row(t, "x"), "from initial, with the tombstone's checkpoints and revision + 1")
	it, ok, err := e.Row(ctx, testlogic.RowKey("x"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "7", attr(it, "total"))

	o = e.ApplyBatch(ctx, inputs(s1[0], s1[1], s1[2], s2[0], later[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "a redelivery cannot undo the row created again")
	assert.Equal(t, "7", attr(f.row(t, "x"), "total"))

	// The other instance starts from its carried checkpoint too.
	more := f.append(t, "s2", "Add:10@x")
	o = e.ApplyBatch(ctx, inputs(more[0], s2[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "2", versions(o.Applied()))
	assert.Equal(t, "17", attr(f.row(t, "x"), "total"))
	assert.Equal(t, "2", mapEntry(f.row(t, "x"), "checkpoints", "Acct#s2"))
}

// Removed and started again in one run: the row is written from initial
// after the removal, with a new createdAt.
func TestT3_RemovedAndStartedAgainInOneCall(t *testing.T) {
	f := newFixture(t)
	c := &clock{t0}
	e := f.engine(t, func(p *apply.Projection) {
		p.Removal = &apply.Removal{EntityType: "LedgerRow"}
		p.Now = c.Now
	})
	evs := f.append(t, "a", "Add:1", "Add:2", "Close", "Add:4")
	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[0])).Rows[0].Err)
	c.now = t1

	o := e.ApplyBatch(ctx, inputs(evs[1:]...)).Rows[0]

	require.NoError(t, o.Err)
	assert.False(t, o.Removed)
	row := f.row(t, "a")
	assert.Equal(t, "4", attr(row, "total"))
	assert.Equal(t, "4", attr(row, "log"), "folded from initial after the removal")
	assert.Equal(t, "4", attr(row, "version"))
	assert.Equal(t, t1.Format(time.RFC3339Nano), attr(row, "createdAt"))
	assert.False(t, apply.IsTombstone(row))
}

// removal.ttl sets the TTL attribute on the tombstone, in epoch seconds; a
// row started again over it does not carry it.
func TestT4_RemovalTTLSetsTheTTLAttributeOnTheTombstone(t *testing.T) {
	f := newFixture(t)
	c := &clock{t0}
	e := f.engine(t, withRemoval(c, 720*time.Hour))
	removedRow(t, f, e)

	assert.Equal(t, tombstoneOf("x", abi.Item{
		"version":     abi.N("3"),
		"owner":       abi.S("s1"),
		"checkpoints": abi.M(abi.Item{"Acct#s2": abi.N("1")}),
		"rev":         abi.N("2"),
		"expiresAt":   abi.N(strconv.FormatInt(t0.Add(720*time.Hour).Unix(), 10)),
	}), f.row(t, "x"))

	later := f.append(t, "s1", "Add:7@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(later[0])).Rows[0].Err)
	assert.Equal(t, "<absent>", attr(f.row(t, "x"), "expiresAt"), "a live row must not expire")
}

// Removal settings that cannot work are refused.
func TestT4_RemovalConfigurationsThatCannotWorkAreRefused(t *testing.T) {
	f := newFixture(t)
	for name, tc := range map[string]struct {
		rm   apply.Removal
		cp   string
		want string
	}{
		"no entity type":      {rm: apply.Removal{}, want: "entity type"},
		"ttl without attr":    {rm: apply.Removal{EntityType: "E", TTL: time.Hour}, want: "TTL attribute"},
		"attr without ttl":    {rm: apply.Removal{EntityType: "E", TTLAttribute: "ttl"}, want: "no TTL"},
		"negative ttl":        {rm: apply.Removal{EntityType: "E", TTL: -time.Hour}, want: "negative"},
		"ttl attr is the key": {rm: apply.Removal{EntityType: "E", TTL: time.Hour, TTLAttribute: "pk"}, want: "key attribute"},
		"ttl attr is the cp":  {rm: apply.Removal{EntityType: "E", TTL: time.Hour, TTLAttribute: "version"}, want: "also the checkpoint field"},
		"marker is the cp":    {rm: apply.Removal{EntityType: "E"}, cp: "__edd_e__", want: "also the checkpoint field"},
		"valid":               {rm: apply.Removal{EntityType: "E", TTL: time.Hour, TTLAttribute: "ttl"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := apply.Projection{Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"},
				Sources: []apply.Source{{Stream: testlogic.Stream}}, Checkpoint: apply.Checkpoint{Field: "version"},
				Logic: f.logic, Removal: &tc.rm}
			if tc.cp != "" {
				p.Checkpoint.Field = tc.cp
			}
			_, err := apply.New(p, f.db, reader{f})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, apply.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A create over a tombstone by an instance in the map carries the
// checkpoint field and instance field of the instance it follows, so that
// instance's redelivery is still already applied.
func TestT2_ACreateOverATombstoneCarriesEveryCheckpoint(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withRemoval(&clock{t0}, 0))
	s1, _ := removedRow(t, f, e)
	later := f.append(t, "s2", "Add:10@x")

	o := e.ApplyBatch(ctx, inputs(later[0])).Rows[0]

	require.NoError(t, o.Err)
	row := f.row(t, "x")
	assert.Equal(t, "10", attr(row, "total"), "from initial")
	assert.Equal(t, "3", attr(row, "version"), "s1's checkpoint field is carried over")
	assert.Equal(t, "s1", attr(row, "owner"))
	assert.Equal(t, "2", mapEntry(row, "checkpoints", "Acct#s2"))
	assert.Equal(t, "3", attr(row, "rev"))

	o = e.ApplyBatch(ctx, inputs(s1...)).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "s1's redelivery, removal included, is already applied")
	assert.Equal(t, "10", attr(f.row(t, "x"), "total"))
}
