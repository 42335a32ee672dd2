package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// stoppedEngine is an engine whose writes commit their effects claimed for
// claimFor by a deliverer that never delivers them: a process killed
// between a row's write and its delivery.
func (f *fixture) stoppedEngine(t *testing.T, claimFor time.Duration) *apply.Engine {
	t.Helper()
	e, err := apply.New(apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.fx,
		Sources:  []apply.Source{{Stream: testlogic.Stream}},
		Revision: &apply.Revision{Field: "rev"}, Checkpoint: apply.Checkpoint{Map: "checkpoints"}, Now: f.clock,
		Outbox: &apply.Outbox{EntityType: "LedgerRow", Index: "outbox", ClaimFor: claimFor,
			Deliver: func(context.Context, apply.Committed) (int, int) { return 0, 0 }},
	}, f.db, f)
	require.NoError(t, err)
	return e
}

// A sweep delivers, in order, the effects of rows whose claim expired
// (their deliverer stopped) and leaves a row whose claim is live to its
// holder, until that claim ends; it counts what is pending and dates the
// oldest by its claim.
func TestO5_SweepDeliversEffectsWhoseClaimExpiredAndLeavesLiveClaims(t *testing.T) {
	f := newFixture(t, 2)
	claimFor := 10 * time.Second
	e := f.stoppedEngine(t, claimFor)
	t0 := f.clock()
	f.commit(t, e, "a", 1, 2)
	f.commit(t, e, "b", 1)
	f.advance(5 * time.Second)
	f.commit(t, e, "c", 1)
	f.advance(6 * time.Second) // a's and b's claims ended; c's holds 4 s more
	d := *f.drain
	d.ClaimFor = claimFor
	got := &recorder{}

	rep, err := d.Sweep(ctx, got)

	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a/v1.0", "a/v1.1", "a/v2.0", "a/v2.1", "b/v1.0", "b/v1.1"}, got.delivered())
	assert.Equal(t, []string{"a/v1.0", "a/v1.1", "a/v2.0", "a/v2.1"}, filterRow(got.delivered(), "a"), "a row's effects in order")
	assert.Equal(t, 8, rep.Pending)
	assert.Equal(t, 3, rep.Rows)
	assert.Equal(t, 1, rep.Claimed, "c's claim is live")
	assert.Equal(t, t0.UnixMilli(), rep.Oldest.UnixMilli())
	assert.Zero(t, f.pending(t, "a")+f.pending(t, "b"))
	assert.Equal(t, 2, f.pending(t, "c"))

	rep, err = d.Sweep(ctx, got)
	require.NoError(t, err)
	assert.Len(t, got.delivered(), 6, "c's claim still holds: nothing more")
	assert.Equal(t, 2, rep.Pending)

	f.advance(5 * time.Second)
	_, err = d.Sweep(ctx, got)
	require.NoError(t, err)
	assert.Equal(t, []string{"c/v1.0", "c/v1.1"}, filterRow(got.delivered(), "c"), "once its claim ended")
	assert.Len(t, got.delivered(), 8, "each effect once")
	assert.Zero(t, f.pending(t, "c"))
}

// filterRow keeps the delivered names of one row's effects.
func filterRow(names []string, row string) []string {
	var out []string
	for _, n := range names {
		if len(n) > len(row) && n[:len(row)+1] == row+"/" {
			out = append(out, n)
		}
	}
	return out
}
