package apply_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// weightLog is the legacy-row configuration: one source "weigh" whose
// checkpoint is the row's own weighVersion (stored version - 1), owned by
// the session named in weighSession; a second session goes to the map.
func weightLog(p *apply.Projection) {
	p.Sources = []apply.Source{{Name: "weigh", Stream: testlogic.Stream}}
	p.Revision = &apply.Revision{Field: "revision"}
	p.Checkpoint = apply.Checkpoint{Map: "checkpoints", Sources: map[string]apply.Scalar{
		"weigh": {Field: "weighVersion", Offset: -1, InstanceField: "weighSession"},
	}}
}

// A row written before the projection lacks every field the projection
// keeps: every event applies, the first write sets the initial revision
// (not initial + 1), the instance adopts the field, and the map stays
// absent while every instance has a field of its own.
func TestM4_ALegacyWeightLogRowIsAdoptedByItsFirstSession(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, weightLog)
	legacy := testlogic.RowKey("sh-1")
	legacy["total"], legacy["count"], legacy["log"] = abi.N("10"), abi.N("1"), abi.S("")
	require.NoError(t, f.db.PutItem(ctx, putOf(f.table, legacy)))
	w1 := f.append(t, "w-1", "Add:5@sh-1", "Add:2@sh-1")

	o := e.ApplyBatch(ctx, inputs(w1[0])).Rows[0]
	require.NoError(t, o.Err)
	row := f.row(t, "sh-1")
	assert.Equal(t, "15", attr(row, "total"), "folded from the row as it was")
	assert.Equal(t, "1", attr(row, "revision"), "a legacy row's first projection write gets initial")
	assert.Equal(t, "0", attr(row, "weighVersion"), "version 1 stored with offset -1")
	assert.Equal(t, "w-1", attr(row, "weighSession"), "the unowned field is adopted")
	assert.Equal(t, "<absent>", attr(row, "checkpoints"), "the map is written only once an instance lands in it")

	o = e.ApplyBatch(ctx, inputs(w1[1], w1[0])).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, "1", versions(o.Instances[0].AlreadyApplied))
	row = f.row(t, "sh-1")
	assert.Equal(t, "17", attr(row, "total"))
	assert.Equal(t, "1", attr(row, "weighVersion"))
	assert.Equal(t, "2", attr(row, "revision"))

	// A second session of the same source goes to the map.
	w2 := f.append(t, "w-2", "Add:3@sh-1")
	require.NoError(t, e.ApplyBatch(ctx, inputs(w2...)).Rows[0].Err)
	row = f.row(t, "sh-1")
	assert.Equal(t, "20", attr(row, "total"))
	assert.Equal(t, "w-1", attr(row, "weighSession"))
	assert.Equal(t, "1", mapEntry(row, "checkpoints", "weigh#w-2"))
}

// Each source keeps its own scalar field; without a map, a second instance
// of a source fails alone with ProjectionSourceConflict, and the map never
// appears.
func TestM3_EachSourceHasItsOwnFieldAndASecondInstanceConflictsWithoutAMap(t *testing.T) {
	f := newFixture(t)
	e := f.engine(t, func(p *apply.Projection) {
		p.Sources = []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "weigh", Stream: testlogic.Stream}}
		p.Revision = &apply.Revision{Field: "revision"}
		p.Checkpoint = apply.Checkpoint{Field: "orderVersion", InstanceField: "orderId", Sources: map[string]apply.Scalar{
			"weigh": {Field: "weighVersion", Offset: 100, InstanceField: "weighSession"},
		}}
	})
	o1 := f.append(t, "o-1", "Add:1@x", "Add:2@x")
	w1 := f.append(t, "w-1", "Add:10@x", "Add:30@x")
	w2 := f.append(t, "w-2", "Add:20@x")

	o := e.ApplyBatch(ctx, append(sourced("order", o1...), sourced("weigh", w1[0])...)).Rows[0]
	require.NoError(t, o.Err)
	row := f.row(t, "x")
	assert.Equal(t, "13", attr(row, "total"))
	assert.Equal(t, "2", attr(row, "orderVersion"))
	assert.Equal(t, "o-1", attr(row, "orderId"))
	assert.Equal(t, "101", attr(row, "weighVersion"), "version 1 with the source's own offset")
	assert.Equal(t, "w-1", attr(row, "weighSession"))
	assert.Equal(t, "<absent>", attr(row, "checkpoints"))

	o = e.ApplyBatch(ctx, append(sourced("weigh", w2...), sourced("weigh", w1...)...)).Rows[0]
	row = f.row(t, "x")
	assert.Equal(t, "43", attr(row, "total"), "w-1's v2 applies; nothing of w-2 is folded")
	assert.Equal(t, "102", attr(row, "weighVersion"))
	assert.Equal(t, "<absent>", attr(row, "checkpoints"))
	require.NoError(t, o.Err, "the row fails only when every instance does")
	for _, in := range o.Instances {
		if in.StreamID == "w-2" {
			assert.ErrorIs(t, in.Err, apply.ErrProjectionSourceConflict)
		} else {
			assert.NoError(t, in.Err)
			assert.Equal(t, "1", versions(in.AlreadyApplied))
			assert.Equal(t, "2", versions(in.Applied))
		}
	}
}

func TestM3_PerSourceCheckpointConfigurationsThatCannotWorkAreRefused(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		mod  func(p *apply.Projection)
		want string
	}{
		{"unknown source", func(p *apply.Projection) {
			p.Checkpoint.Sources = map[string]apply.Scalar{"nope": {Field: "v"}}
		}, `"nope" is not a source of the projection; its sources are [weigh]`},
		{"map without instance field", func(p *apply.Projection) {
			p.Checkpoint.Sources = map[string]apply.Scalar{"weigh": {Field: "v"}}
		}, "name the instance field"},
		{"first source twice", func(p *apply.Projection) { p.Checkpoint.Field = "version"; p.Checkpoint.InstanceField = "owner" }, "not both"},
		{"without revision", func(p *apply.Projection) { p.Revision = nil }, "revision"},
		{"field is the revision", func(p *apply.Projection) {
			p.Checkpoint.Sources = map[string]apply.Scalar{"weigh": {Field: "revision", InstanceField: "s"}}
		}, `[EDD-9081]`},
		{"a source's field without instance field or map", func(p *apply.Projection) {
			p.Checkpoint.Map = ""
			p.Checkpoint.Sources = map[string]apply.Scalar{"weigh": {Field: "weighVersion"}}
		}, `[EDD-9081] the checkpoint field "weighVersion" of source "weigh" cannot tell its stream instances apart`},
		{"multi-source: the first source's field without instance field or map", func(p *apply.Projection) {
			p.Checkpoint = apply.Checkpoint{Field: "orderVersion", Sources: map[string]apply.Scalar{"scan": {Field: "sv", InstanceField: "si"}}}
			p.Sources = []apply.Source{{Name: "order", Stream: "Order"}, {Name: "scan", Stream: "Scan"}}
		}, `[EDD-9081] the checkpoint field "orderVersion" of source "order" cannot tell its stream instances apart`},
		{"multi-source without map and a source without field", func(p *apply.Projection) {
			p.Checkpoint.Map = ""
			p.Sources = append(p.Sources, apply.Source{Name: "scan", Stream: "Scan"})
		}, `source "scan" has no checkpoint field`},
	} {
		p := apply.Projection{Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.logic}
		weightLog(&p)
		tc.mod(&p)
		_, err := apply.New(p, f.db, reader{f})
		if assert.ErrorIs(t, err, apply.ErrConfig, tc.name) {
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
}
