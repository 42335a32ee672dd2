package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// appendN appends n events of spec to the stream instance, in appends of
// at most 50, and returns them.
func appendN(t *testing.T, f *fixture, streamID string, n int, spec string) []abi.Event {
	t.Helper()
	var out []abi.Event
	for n > 0 {
		k := min(n, 50)
		specs := make([]string, k)
		for i := range specs {
			specs[i] = spec
		}
		out = append(out, f.append(t, streamID, specs...)...)
		n -= k
	}
	return out
}

// committedEffects returns the row x's outbox items as "v<version>.<index>"
// in commit order, and their sort keys' "<revision>#<index>" parts.
func committedEffects(t *testing.T, f *fixture) (effects, keys []string) {
	t.Helper()
	for _, it := range outboxItems(t, f, f.table, "Ledger#x", "L#outbox#") {
		effects = append(effects, "v"+it[apply.OutboxAttrVersion].Str+"."+it[apply.OutboxAttrIndex].Str)
		sk := strings.TrimPrefix(it["sk"].Str, "L#outbox#")
		rev, idx, _ := strings.Cut(sk, "#")
		keys = append(keys, strings.TrimLeft(rev, "0")+"#"+strings.TrimLeft(idx, "0"))
	}
	return effects, keys
}

// wantEffects is "v1.0" … "v<to>.0": one effect per event, in order.
func wantEffects(from, to int) []string {
	var out []string
	for v := from; v <= to; v++ {
		out = append(out, fmt.Sprintf("v%d.0", v))
	}
	return out
}

// A row 250 one-effect events behind (here: only the newest delivered, the
// rest gap-filled) is written in steps whose effects fit a transaction:
// every effect committed once, in order, and the row at the head; the
// stream's next event folds as usual.
func TestO1_ARunOfMoreEffectsThanATransactionIsWrittenInSteps(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := appendN(t, f, "a", 250, "Add:1@x")
	f.db.ResetCounts()

	o := e.ApplyBatch(ctx, inputs(evs[249])).Rows[0]

	require.NoError(t, o.Err)
	assert.True(t, o.Written)
	assert.Equal(t, 250, o.Enqueued)
	require.Len(t, o.Instances, 1)
	assert.Len(t, o.Instances[0].Applied, 250, "the outcome reports every step's events")
	assert.Equal(t, uint64(250), o.Instances[0].Version)
	assert.Equal(t, int64(3), o.Revision, "three writes: 99, 99 and 52 effects")
	assert.Equal(t, int64(3), f.db.Counts()["TransactWriteItems"])
	row := f.row(t, "x")
	assert.Equal(t, "250", row["total"].Str)
	assert.Equal(t, "250", row["checkpoints"].Map[testlogic.Stream+"#a"].Str)
	got, keys := committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 250), got)
	assert.Equal(t, "1#", keys[0])
	assert.Equal(t, "1#98", keys[98])
	assert.Equal(t, "2#", keys[99])
	assert.Equal(t, "3#51", keys[249])

	next := f.append(t, "a", "Add:1@x")
	o = e.ApplyBatch(ctx, inputs(next...)).Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 1, o.Enqueued)
	assert.Equal(t, int64(4), o.Revision)
	got, _ = committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 251), got)
}

// The second step's transaction fails (a crash between the steps): the
// row stays at the first step's checkpoint with exactly its effects, and
// the next delivery goes on from there, committing each effect once and
// under the same item keys a retry of that step would use.
func TestO1_AFailedStepLeavesTheRowAtTheStepBefore(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := appendN(t, f, "a", 250, "Add:1@x")
	calls := 0
	f.logic.OnEvolve = func(*abi.EvolveRequest) {
		calls++
		if calls == 3 { // the second step's fold: the first is written
			f.env.Server.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "TransactWriteItems", Code: "AccessDeniedException"}}})
		}
	}
	t.Cleanup(func() { f.env.Server.SetFaults(ddblocal.FaultConfig{}) })

	o := e.ApplyBatch(ctx, inputs(evs[249])).Rows[0]

	require.Error(t, o.Err)
	assert.Contains(t, o.Err.Error(), "AccessDenied")
	row := f.row(t, "x")
	assert.Equal(t, "99", row["checkpoints"].Map[testlogic.Stream+"#a"].Str, "the first step's checkpoint")
	assert.Equal(t, "99", row["total"].Str, "the state at that checkpoint")
	assert.Equal(t, "1", row["rev"].Str)
	got, _ := committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 99), got, "exactly the effects of the events up to it")

	f.logic.OnEvolve = nil
	o = e.ApplyBatch(ctx, inputs(evs[249])).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 151, o.Enqueued)
	assert.Len(t, o.Instances[0].Applied, 151)
	assert.Equal(t, "250", f.row(t, "x")["total"].Str)
	got, keys := committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 250), got, "nothing committed twice, nothing lost")
	assert.Equal(t, "2#", keys[99], "the failed step, retried, commits under its own keys")
	assert.Equal(t, "3#51", keys[249])
}

// A step that loses a race (a transaction conflict) is read again and
// written from the step before it, within the call.
func TestO1_AStepThatLosesARaceIsRetried(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	evs := appendN(t, f, "a", 150, "Add:1@x")
	calls := 0
	f.logic.OnEvolve = func(*abi.EvolveRequest) {
		calls++
		if calls == 3 {
			f.env.Server.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "TransactWriteItems", Code: ddblocal.FaultTransactionConflict}}})
		}
	}
	t.Cleanup(func() { f.env.Server.SetFaults(ddblocal.FaultConfig{}) })

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Attempts)
	assert.Equal(t, 150, o.Enqueued)
	assert.Len(t, o.Instances[0].Applied, 150)
	assert.Empty(t, o.Instances[0].AlreadyApplied, "the first step's events are reported applied, not already applied")
	got, _ := committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 150), got)
	assert.Equal(t, "150", f.row(t, "x")["total"].Str)
}

// An event whose effects alone do not fit one transaction fails the row
// naming the event; nothing is written.
func TestO1_AnEventWithMoreEffectsThanATransactionFailsNamingIt(t *testing.T) {
	f := newFixture(t)
	mod, fx := withOutbox(f, 1, nil)
	fx.SetOf(func(ev abi.Event) []abi.Value {
		n := 1
		if ev.Version == 2 {
			n = 100
		}
		out := make([]abi.Value, n)
		for i := range out {
			out[i] = testlogic.EffectOf(ev, i)
		}
		return out
	})
	e := f.engine(t, mod)
	evs := f.append(t, "a", "Add:1@x", "Add:1@x", "Add:1@x")

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.ErrorIs(t, o.Err, apply.ErrTooManyEffects)
	msg := o.Err.Error()
	assert.Contains(t, msg, testlogic.Stream+" a v2")
	assert.Contains(t, msg, "100 effects")
	assert.Contains(t, msg, "pk=Ledger#x,sk=L")
	assert.NotContains(t, msg, "smaller batches")
	assert.Nil(t, f.row(t, "x"), "nothing was written")
	assert.Empty(t, outboxItems(t, f, f.table, "Ledger#x", "L#outbox#"))
}

// A catch-up and a rebuild of a row whose run carries more effects than a
// transaction holds are written in steps too; the rebuild commits only
// the effects of the events the row had not considered.
func TestO1_CatchUpAndRebuildOfALongRunAreWrittenInSteps(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	first := appendN(t, f, "a", 10, "Add:1@x")
	require.NoError(t, e.ApplyBatch(ctx, inputs(first...)).Rows[0].Err)
	appendN(t, f, "a", 140, "Add:1@x")

	o, err := e.CatchUp(context.Background(), "a")

	require.NoError(t, err)
	assert.Equal(t, 140, o.Enqueued)
	assert.Len(t, o.Instances[0].Applied, 140)
	assert.Equal(t, "150", f.row(t, "x")["total"].Str)
	got, _ := committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 150), got)

	appendN(t, f, "a", 200, "Add:1@x")
	outs, err := e.Rebuild(context.Background(), "a")

	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, 200, outs[0].Enqueued, "only the events after the row's checkpoint commit effects")
	assert.Len(t, outs[0].Instances[0].Applied, 200)
	row := f.row(t, "x")
	assert.Equal(t, "350", row["total"].Str)
	assert.Equal(t, "350", row["checkpoints"].Map[testlogic.Stream+"#a"].Str)
	got, _ = committedEffects(t, f)
	assert.Equal(t, wantEffects(1, 350), got)
}

// A row fed by two stream instances is cut in fold order: the second
// instance's events follow the first's, across the steps, and each
// instance's checkpoint ends at its head.
func TestO1_StepsKeepTheFoldOrderOfSeveralInstances(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 1, nil)
	e := f.engine(t, mod)
	a := appendN(t, f, "a", 120, "Add:1@x")
	b := appendN(t, f, "b", 60, "Add:2@x")

	o := e.ApplyBatch(ctx, inputs(append(b, a...)...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 180, o.Enqueued)
	assert.Equal(t, int64(2), o.Revision, "99, then 21 + 60")
	require.Len(t, o.Instances, 2)
	assert.Len(t, o.Instances[0].Applied, 120)
	assert.Len(t, o.Instances[1].Applied, 60)
	row := f.row(t, "x")
	assert.Equal(t, "240", row["total"].Str)
	assert.Equal(t, "120", row["checkpoints"].Map[testlogic.Stream+"#a"].Str)
	assert.Equal(t, "60", row["checkpoints"].Map[testlogic.Stream+"#b"].Str)
	var got []string
	for _, it := range outboxItems(t, f, f.table, "Ledger#x", "L#outbox#") {
		got = append(got, it[apply.OutboxAttrStreamID].Str+"/"+it[apply.OutboxAttrVersion].Str)
	}
	require.Len(t, got, 180)
	assert.Equal(t, "a/1", got[0])
	assert.Equal(t, "a/120", got[119])
	assert.Equal(t, "b/1", got[120])
	assert.Equal(t, "b/60", got[179])
}

// Latest-mode instances are kept or left out of a step whole: each folds
// only its newest event, so three of 40 effects are written 80, then 40.
func TestO1_LatestModeInstancesAreStepsOfTheirOwn(t *testing.T) {
	f := newFixture(t)
	mod, _ := withOutbox(f, 40, func(p *apply.Projection) { p.Sources[0].Mode = abi.ModeLatest })
	e := f.engine(t, mod)
	var evs []abi.Event
	for _, id := range []string{"a", "b", "c"} {
		evs = append(evs, f.append(t, id, "Add:1@x", "Add:2@x")...)
	}

	o := e.ApplyBatch(ctx, inputs(evs...)).Rows[0]

	require.NoError(t, o.Err)
	assert.Equal(t, 120, o.Enqueued)
	assert.Equal(t, int64(2), o.Revision)
	require.Len(t, o.Instances, 3)
	for _, in := range o.Instances {
		assert.Equal(t, "2", versions(in.Applied), in.StreamID)
		assert.Equal(t, uint64(2), in.Version, in.StreamID)
	}
	assert.Equal(t, "6", f.row(t, "x")["total"].Str)
	items := outboxItems(t, f, f.table, "Ledger#x", "L#outbox#")
	require.Len(t, items, 120)
	for i, it := range items {
		want := []string{"a", "b", "c"}[i/40]
		assert.Equal(t, want, it[apply.OutboxAttrStreamID].Str, i)
		assert.Equal(t, []string{"1", "1", "2"}[i/40], it[apply.OutboxAttrRevision].Str, i)
	}
}
