package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// stoppedEngine is an engine whose writes commit their effects claimed for
// claimFor by a deliverer that never delivers them: a process killed
// between a row's write and its delivery.
func (f *fixture) stoppedEngine(t *testing.T, claimFor time.Duration) *apply.Engine {
	t.Helper()
	return f.deliveringEngine(t, claimFor, func(context.Context, apply.Committed) (int, int) { return 0, 0 })
}

// deliveringEngine is an engine on the fixture's clock whose writes commit
// their effects claimed for claimFor and hand them to deliver.
func (f *fixture) deliveringEngine(t *testing.T, claimFor time.Duration, deliver func(context.Context, apply.Committed) (int, int)) *apply.Engine {
	t.Helper()
	e, err := apply.New(apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.fx,
		Sources:  []apply.Source{{Stream: testlogic.Stream}},
		Revision: &apply.Revision{Field: "rev"}, Checkpoint: apply.Checkpoint{Map: "checkpoints"}, Now: f.clock,
		Outbox: &apply.Outbox{EntityType: "LedgerRow", Index: "outbox", ClaimFor: claimFor, Deliver: deliver},
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

// Two sweeps at once (two workers that both think they sweep, for a
// round) deliver each effect once: the claim keeps each to one of them.
func TestO5_TwoSweepsAtOnceDeliverEachEffectOnce(t *testing.T) {
	f := newFixture(t, 2)
	e := f.stoppedEngine(t, 10*time.Second)
	for i := range 20 {
		f.commit(t, e, fmt.Sprint("r", i), 1, 2)
	}
	f.advance(11 * time.Second)
	got := &recorder{}
	var wg sync.WaitGroup
	reps := make([]outbox.SweepReport, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := *f.drain
			d.ClaimFor = 10 * time.Second
			var err error
			reps[i], err = d.Sweep(ctx, got)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()

	count := map[string]int{}
	for _, n := range got.delivered() {
		count[n]++
	}
	assert.Len(t, count, 80)
	for n, c := range count {
		assert.Equal(t, 1, c, n)
	}
}

// A row's write that finds its older effect claimed by a drainer that
// stopped logs it, once per claim, at info once the claim is past half
// its length; a delivery that fails logs that `host run` sweeps it and
// names `host drain-pending`.
func TestO5_AWriteBehindAStoppedClaimLogsItOnce(t *testing.T) {
	f := newFixture(t, 1)
	claimFor := 10 * time.Second
	f.commit(t, f.stoppedEngine(t, claimFor), "a", 1)
	f.advance(6 * time.Second)
	var logs syncBuffer
	d := *f.drain
	d.ClaimFor, d.Logger = claimFor, slog.New(slog.NewTextHandler(&logs, nil))
	got := &recorder{}
	live := f.deliveringEngine(t, claimFor, func(ctx context.Context, c apply.Committed) (int, int) {
		rep, err := d.Deliver(ctx, c, got)
		assert.NoError(t, err)
		assert.True(t, rep.Busy, "the older effect is claimed")
		return len(rep.Delivered), 0
	})

	f.commit(t, live, "a", 2)
	f.commit(t, live, "a", 3)

	assert.Empty(t, got.delivered(), "nothing overtakes the claimed effect")
	assert.Equal(t, 1, strings.Count(logs.String(), "claimed by another drainer"), logs.String())
	assert.Contains(t, logs.String(), "level=INFO")
	assert.Contains(t, logs.String(), "sweepWithin=14s")

	f.advance(5 * time.Second)
	d.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, err := d.Sweep(ctx, &recorder{fail: func(deliver.Effect) error { return errors.New("down") }})
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "`host run` sweeps it within 10s, or run `host drain-pending` to deliver it now")
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
