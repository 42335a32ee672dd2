package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// mapEntry reads the checkpoint map's entry of an instance ("<absent>" when
// the map or the entry is absent).
func mapEntry(it abi.Item, field, instance string) string {
	m, ok := it[field]
	if !ok || m.Kind != abi.KindM {
		return "<absent>"
	}
	return attr(m.Map, instance)
}

func withMap(p *apply.Projection) {
	p.Revision = &apply.Revision{Field: "rev"}
	p.Checkpoint = apply.Checkpoint{Map: "checkpoints"}
}

// Two stream instances feed row x; each keeps its own checkpoint in the
// map, so a redelivery of both is already applied and not folded again.
func TestM3_TwoInstancesOfARowKeepACheckpointEachInTheMap(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	a := f.append(t, "s1", "Add:1@x")
	b := f.append(t, "s2", "Add:2@x")

	o := e.ApplyBatch(ctx, inputs(a[0], b[0])).Rows[0]
	require.NoError(t, o.Err)
	row := f.row(t, "x")
	assert.Equal(t, "3", attr(row, "total"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#s1"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#s2"))

	o = e.ApplyBatch(ctx, inputs(b[0], a[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "a redelivery of both instances writes nothing")
	assert.Empty(t, o.Applied())
	assert.Equal(t, "3", attr(f.row(t, "x"), "total"), "the events are not folded again")
	assert.Equal(t, "1", attr(f.row(t, "x"), "rev"))
}

// A scalar checkpoint field without a map and without an instance field can
// follow one instance only: two instances in one call fail the row with
// ProjectionSourceConflict instead of writing a row whose checkpoint no
// redelivery can be checked against.
func TestM3_AScalarCheckpointRefusesASecondInstanceWithRevision(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) { p.Revision = &apply.Revision{Field: "rev"} })
	a := f.append(t, "s1", "Add:1@x")
	b := f.append(t, "s2", "Add:2@x")

	for range 2 {
		o := e.ApplyBatch(ctx, inputs(a[0], b[0])).Rows[0]
		require.Error(t, o.Err)
		assert.ErrorIs(t, o.Err, apply.ErrProjectionSourceConflict)
	}
	assert.Nil(t, f.row(t, "x"), "nothing is folded twice: nothing is written")
}

// The scalar field is adopted by the first instance that writes the row and
// recorded in the instance field; a second instance, in a later call, gets
// its own map entry instead of being compared with the first one's version.
func TestM3_TheInstanceFieldIsAdoptedAndASecondInstanceGoesToTheMap(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner", Map: "checkpoints"}
	})
	a := f.append(t, "s1", "Add:1@x", "Add:2@x")
	b := f.append(t, "s2", "Add:5@x")

	require.NoError(t, e.ApplyBatch(ctx, inputs(a...)).Rows[0].Err)
	row := f.row(t, "x")
	assert.Equal(t, "2", attr(row, "version"))
	assert.Equal(t, "s1", attr(row, "owner"))
	assert.Equal(t, "<absent>", attr(row, "checkpoints"), "the map is written only once an instance lands in it")

	o := e.ApplyBatch(ctx, inputs(b...)).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "1", versions(o.Applied()), "s2's v1 is not s1's v1")
	row = f.row(t, "x")
	assert.Equal(t, "8", attr(row, "total"))
	assert.Equal(t, "2", attr(row, "version"), "the field still follows s1")
	assert.Equal(t, "s1", attr(row, "owner"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#s2"))

	o = e.ApplyBatch(ctx, inputs(a[1], b[0], a[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "8", attr(f.row(t, "x"), "total"))
}

// Without a map, a second instance arriving in a later call fails with
// ProjectionSourceConflict; it is not reported as already applied.
func TestM3_ASecondInstanceInALaterCallConflictsWithoutAMap(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner"}
	})
	a := f.append(t, "s1", "Add:1@x", "Add:2@x")
	b := f.append(t, "s2", "Add:5@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a...)).Rows[0].Err)

	o := e.ApplyBatch(ctx, inputs(b...)).Rows[0]

	require.Error(t, o.Err)
	assert.ErrorIs(t, o.Err, apply.ErrProjectionSourceConflict)
	require.Len(t, o.Instances, 1)
	assert.Empty(t, o.Instances[0].AlreadyApplied, "s2's v1 is not s1's v1")
	row := f.row(t, "x")
	assert.Equal(t, "3", attr(row, "total"))
	assert.Equal(t, "1", attr(row, "rev"), "nothing is written")
}

func TestM5_RevisionWithoutACheckpointIsRefused(t *testing.T) {
	f := newFixture(t)
	p := apply.Projection{Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:  []apply.Source{{Name: "Acct", Stream: "Acct"}},
		Revision: &apply.Revision{Field: "rev"}, Logic: f.logic}
	_, err := apply.New(p, f.db, reader{f})
	require.ErrorIs(t, err, apply.ErrConfig)
	assert.Contains(t, err.Error(), "checkpoint")
}

func TestM5_RevisionInitialZeroIsTheFirstWritesRevision(t *testing.T) {
	f := newFixture(t)
	zero := int64(0)
	e := f.engine(t, func(p *apply.Projection) { p.Revision = &apply.Revision{Field: "rev", Initial: &zero} })
	evs := f.append(t, "a", "Add:1", "Add:2")

	o := e.ApplyBatch(ctx, inputs(evs[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "0", attr(f.row(t, "a"), "rev"))
	assert.Equal(t, int64(0), o.Revision)

	require.NoError(t, e.ApplyBatch(ctx, inputs(evs[1])).Rows[0].Err)
	assert.Equal(t, "1", attr(f.row(t, "a"), "rev"))
}

// One stream feeds rows x and y. Row x's checkpoint stops at its last
// applied event: y's v3 does not carry it past x's skipped v2, which is
// decided again by the next delivery.
func TestP9_AnotherRowsVersionDoesNotCarryTheCheckpointPastASkippedEvent(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, nil)
	evs := f.append(t, "s", "Add:1@x", "Skip@x", "Add:5@y", "Skip@x")

	res := e.ApplyBatch(ctx, inputs(evs...))
	require.Len(t, res.Rows, 2)
	assert.Equal(t, "1", attr(f.row(t, "x"), "version"), "the checkpoint stays below the skipped v2")
	assert.Equal(t, "3", attr(f.row(t, "y"), "version"))

	o := e.ApplyBatch(ctx, inputs(evs[1])).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "2", versions(o.Instances[0].Skipped), "v2 is decided again, not already applied")

	// Versions of another row right after the last applied one are
	// considered: the checkpoint passes them.
	more := f.append(t, "t", "Add:1@p", "Add:1@q", "Skip@p")
	e.ApplyBatch(ctx, inputs(more...))
	assert.Equal(t, "2", attr(f.row(t, "p"), "version"))
}

func TestM3_CheckpointConfigurationsThatCannotWorkAreRefused(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		mod  func(p *apply.Projection)
		want string
	}{
		{"map without revision", func(p *apply.Projection) { p.Checkpoint.Map = "cps"; p.Checkpoint.InstanceField = "owner" }, "needs a revision"},
		{"instance field without field", func(p *apply.Projection) { withMap(p); p.Checkpoint.InstanceField = "owner" }, "no checkpoint field"},
		{"field and map without instance field", func(p *apply.Projection) { withMap(p); p.Checkpoint.Field = "version" }, "name the instance field"},
		{"map is the revision", func(p *apply.Projection) { withMap(p); p.Checkpoint.Map = "rev" }, `"rev" is also the checkpoint map`},
		{"map is a key", func(p *apply.Projection) { withMap(p); p.Checkpoint.Map = "pk" }, `[EDD-9081] the checkpoint map "pk" is a key attribute`},
		{"multi-source without map", func(p *apply.Projection) {
			p.Revision = &apply.Revision{Field: "rev"}
			p.Sources = append(p.Sources, apply.Source{Name: "other", Stream: "Other"})
		}, "name the checkpoint map"},
	} {
		p := apply.Projection{Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"},
			Sources:    []apply.Source{{Name: "Acct", Stream: "Acct"}},
			Checkpoint: apply.Checkpoint{Field: "version"}, Logic: f.logic}
		tc.mod(&p)
		_, err := apply.New(p, f.db, reader{f})
		if assert.ErrorIs(t, err, apply.ErrConfig, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
}

// An instance that conflicts is its own failure: the owner's events are
// written, and the conflicting instance's earliest record is reported
// failed so the source delivers it again.
func TestM3_AConflictingInstanceFailsAloneAndIsReported(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner"}
	})
	a := f.append(t, "s1", "Add:1@x", "Add:2@x")
	b := f.append(t, "s2", "Add:5@x", "Add:6@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(a[0])).Rows[0].Err)

	o := e.ApplyBatch(ctx, inputs(b[1], a[1], b[0])).Rows[0]

	require.NoError(t, o.Err, "the row fails only when every instance does")
	assert.True(t, o.Written)
	assert.Equal(t, "2", versions(o.Applied()))
	assert.Equal(t, []int{0}, o.FailedPositions(), "the conflicting instance's earliest record")
	for _, in := range o.Instances {
		if in.StreamID == "s2" {
			assert.ErrorIs(t, in.Err, apply.ErrProjectionSourceConflict)
			assert.Equal(t, []int{0, 2}, in.Positions)
		} else {
			assert.NoError(t, in.Err)
		}
	}
	row := f.row(t, "x")
	assert.Equal(t, "3", attr(row, "total"))
	assert.Equal(t, "2", attr(row, "version"))
}

// An instance the map already keeps does not adopt the field when the row
// is still unowned (a row a rebuild left unowned, or written before the
// field was configured): its entry stays its checkpoint.
func TestM3_AnInstanceInTheMapDoesNotAdoptAnUnownedField(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Revision = &apply.Revision{Field: "rev"}
		p.Checkpoint = apply.Checkpoint{Field: "version", InstanceField: "owner", Map: "checkpoints"}
	})
	b := f.append(t, "s2", "Add:4@x")
	row := testlogic.RowKey("x")
	row["total"], row["rev"] = abi.N("4"), abi.N("1")
	row["checkpoints"] = abi.M(abi.Item{"Acct#s2": abi.N("1")})
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, row)))

	o := e.ApplyBatch(ctx, inputs(b[0])).Rows[0]

	require.NoError(t, o.Err)
	assert.False(t, o.Written)
	assert.Equal(t, "1", versions(o.Instances[0].AlreadyApplied))
	assert.Equal(t, "4", attr(f.row(t, "x"), "total"))
	assert.Equal(t, "<absent>", attr(f.row(t, "x"), "owner"))
}

// Per instance: an instance whose events were all skipped gets no map entry
// and its events are decided again by the next delivery, while the other
// instance's events write the row once.
func TestM7_AnInstanceWhoseEventsAreAllSkippedGetsNoMapEntry(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, withMap)
	a := f.append(t, "s1", "Add:3@x")
	b := f.append(t, "s2", "Skip@x", "Add:0@y", "Skip@x")

	o := e.ApplyBatch(ctx, inputs(a[0], b[0], b[1], b[2]))
	var x apply.Outcome
	for _, r := range o.Rows {
		if attr(r.Key, "pk") == "Ledger#x" {
			x = r
		}
	}
	require.NoError(t, x.Err)
	assert.Equal(t, int64(1), x.Revision, "one write, revision bumped once")
	row := f.row(t, "x")
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "Acct#s1"))
	assert.Equal(t, "<absent>", mapEntry(row, "checkpoints", "Acct#s2"))

	again := e.ApplyBatch(ctx, inputs(b[2])).Rows[0]
	require.NoError(t, again.Err)
	assert.False(t, again.Written)
	assert.Equal(t, "1,3", versions(again.Instances[0].Skipped), "gap-filled from version 1 and decided again")
}
