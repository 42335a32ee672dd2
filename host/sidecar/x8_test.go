package sidecar_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// eventually waits (at most a minute) until cond holds, failing with what
// it says when it does not.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, %s: %s", what, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A projection paused across the fleet (the lease table) while events are
// appended applies none of them while the other projection of the same
// feed keeps up; the stream instances it skipped are recorded in the lease
// table; once resumed, every one is caught up from the event store, those
// that get no event again included, and every row of both projections
// equals the fold of its stream. The other projection is never paused.
func TestX8_PauseWhileAppendingThenResumeEveryRowEqualsTheFold(t *testing.T) {
	ctx := context.Background()
	e := start(t, ddblocal.StreamOptions{Shards: 2}, host.SidecarConfig{})
	other := e.cfg.Projections[0]
	other.Name, other.Table = "other", e.cfg.Projections[0].Table+"-other"
	e.cfg.Projections = append(e.cfg.Projections, other)
	h := e.host(t, &testlogic.Ledger{})
	_, err := h.CreateTables(ctx)
	require.NoError(t, err)
	stop := run(e.reader(t, h, "w-a", nil))
	defer stop(nil)

	var mu sync.Mutex
	counts := map[string]int{}
	appendTo := func(id string, k int) {
		mu.Lock()
		from := counts[id]
		counts[id] += k
		mu.Unlock()
		appendAdds(t, h, id, from, k)
	}
	var otherPaused atomic.Bool
	rowsEqual := func(table string, want map[string]int) (bool, string) {
		if h.IsPaused("other") {
			otherPaused.Store(true)
		}
		for id, n := range want {
			it := e.Get(t, table, testlogic.RowKey(id))
			got := ""
			if it != nil {
				got = it["log"].Str
			}
			if got != foldLog(n) {
				return false, fmt.Sprintf("table %s row %s: log %q, want %q", table, id, got, foldLog(n))
			}
		}
		return true, ""
	}
	snapshot := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
	for i := 0; i < 4; i++ {
		appendTo(fmt.Sprint("a", i), 2)
	}
	eventually(t, "both projections fold the first events", func() (bool, string) { return rowsEqual(e.cfg.Projections[0].Table, snapshot()) })

	// appends go on across the pause
	appending := make(chan struct{})
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		for i := 0; ; i++ {
			select {
			case <-appending:
				return
			default:
			}
			appendTo(fmt.Sprint("c", i%3), 1)
		}
	}()
	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, "ledger", true, "tester", "reindexing the search cluster"))
	eventually(t, "the worker pauses the projection", func() (bool, string) { return h.IsPaused("ledger"), "not paused" })
	for i := 0; i < 4; i++ {
		appendTo(fmt.Sprint("a", i), 3)
		appendTo(fmt.Sprint("n", i), 2) // instances first seen while paused
	}
	close(appending)
	<-appended
	paused := snapshot()
	eventually(t, "the other projection keeps up while ledger is paused", func() (bool, string) { return rowsEqual(other.Table, paused) })
	assert.Nil(t, e.Get(t, e.cfg.Projections[0].Table, testlogic.RowKey("n0")), "the paused projection wrote nothing for an instance first seen while paused")
	behind, _ := rowsEqual(e.cfg.Projections[0].Table, paused)
	assert.False(t, behind, "the paused projection is behind")

	byName := map[string]sidecar.FleetProjection{}
	// the instances are recorded right after each batch, before its checkpoint
	eventually(t, "the skipped instances are recorded", func() (bool, string) {
		f, err := sidecar.ReadFleet(ctx, e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range f.Projections {
			byName[p.Name] = p
		}
		return byName["ledger"].Deferred >= 8, fmt.Sprintf("%+v", byName["ledger"])
	})
	assert.True(t, byName["ledger"].Paused)
	assert.Equal(t, "tester", byName["ledger"].By)
	assert.Equal(t, "reindexing the search cluster", byName["ledger"].Reason)
	assert.False(t, byName["other"].Paused)
	assert.Zero(t, byName["other"].Deferred)

	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, "ledger", false, "tester", ""))
	appendTo("a0", 1) // one instance gets a new event; the others only the catch-up brings up
	final := snapshot()
	eventually(t, "every ledger row equals the fold once resumed", func() (bool, string) { return rowsEqual(e.cfg.Projections[0].Table, final) })
	eventually(t, "the other projection's rows equal the fold", func() (bool, string) { return rowsEqual(other.Table, final) })
	eventually(t, "the records of the skipped instances are gone", func() (bool, string) {
		f, err := sidecar.ReadFleet(ctx, e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range f.Projections {
			if p.Deferred > 0 || p.Paused {
				return false, fmt.Sprintf("%s: paused %v, %d instances waiting", p.Name, p.Paused, p.Deferred)
			}
		}
		return true, ""
	})
	assert.False(t, h.IsPaused("ledger"))
	assert.False(t, otherPaused.Load(), "the other projection was never paused")
	assert.Len(t, e.leasesOnly(t), 2, "the control items are not taken for shards")
}

// leasesOnly is the lease table's shard leases, without its control items.
func (e *env) leasesOnly(t *testing.T) []string {
	var out []string
	for k := range e.leases(t) {
		if len(k) < 9 || k[:9] != "dynafold#" {
			out = append(out, k)
		}
	}
	return out
}

// Each worker publishes its last hour of freshness in the lease table, and
// the fleet view (host status) adds them up against the objectives.
func TestX7_WorkersPublishTheirFreshnessForTheFleetView(t *testing.T) {
	ctx := context.Background()
	e := start(t, ddblocal.StreamOptions{Shards: 2}, host.SidecarConfig{})
	e.cfg.Projections[0].Freshness = host.FreshnessConfig{"p95": host.Duration(time.Hour)}
	h := e.host(t, &testlogic.Ledger{})
	m := telemetry.New(telemetry.Options{Objectives: e.cfg.Objectives()})
	var stops []func(error) error
	for _, w := range []string{"w-a", "w-b"} {
		stops = append(stops, e.publishingWorker(t, h, w, m))
	}
	defer func() {
		for _, stop := range stops {
			_ = stop(nil)
		}
	}()
	for i := 0; i < 6; i++ {
		appendAdds(t, h, fmt.Sprint("f", i), 0, 2)
	}
	eventually(t, "the fleet view shows the freshness the workers published", func() (bool, string) {
		f, err := sidecar.ReadFleet(ctx, e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range f.Projections {
			if p.Name != projection {
				continue
			}
			if p.Freshness == nil || p.Freshness.Events() < 12 {
				return false, fmt.Sprintf("%+v", p)
			}
			st := p.Freshness.Status()
			if len(st) != 1 || st[0].Name != "p95" || !st[0].Met || st[0].Within != p.Freshness.Events() {
				return false, fmt.Sprintf("objectives %+v", st)
			}
			return true, ""
		}
		return false, "no ledger projection in the view"
	})
	assert.Len(t, e.leasesOnly(t), 2, "the status rides on the leases: no item of its own")
}
