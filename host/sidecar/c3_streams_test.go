package sidecar_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestC3_TwoStreamsSharingALeaseTableLeaveEachOthersShardsAlone runs two
// fleets, each reading its own event table's stream, with one lease table
// (a configuration copied with only the event table changed). Both fold
// their rows, neither stops (another stream's shard is not read as
// records lost), no worker ever holds a shard of the other stream (not
// even the two named alike), a worker warns once that the table is shared,
// every lease records its stream, and the
// fleet view of each shows its own shards and counts the other's leases.
func TestC3_TwoStreamsSharingALeaseTableLeaveEachOthersShardsAlone(t *testing.T) {
	a := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{})
	b := a.sibling(t, "other")
	ha, hb := a.host(t, &testlogic.Ledger{}), b.host(t, &testlogic.Ledger{})
	wantA, wantB := map[string]string{}, map[string]string{}
	for i := 0; i < 6; i++ {
		appendAdds(t, ha, fmt.Sprintf("a%d", i), 0, 3)
		wantA[fmt.Sprintf("a%d", i)] = foldLog(3)
		appendAdds(t, hb, fmt.Sprintf("b%d", i), 0, 2)
		wantB[fmt.Sprintf("b%d", i)] = foldLog(2)
	}
	ctx := context.Background()
	shardsOf := func(e *env) (string, map[string]bool) {
		api := e.streamsClient(t)
		arn, err := feed.LatestStream(ctx, api, e.cfg.EventStore.Table)
		require.NoError(t, err)
		ss, err := feed.NewReader(api, arn, feed.Options{}).Shards(ctx)
		require.NoError(t, err)
		m := map[string]bool{}
		for _, s := range ss {
			m[s.ID] = true
		}
		return arn, m
	}
	arnA, shardsA := shardsOf(a)
	arnB, shardsB := shardsOf(b)
	require.NotEqual(t, arnA, arnB)

	type run struct {
		stream string
		own    map[string]bool
		obs    *streamObs
		stop   *runner
	}
	var runs []run
	warned := &countingHandler{}
	for _, w := range []struct {
		e      *env
		h      *host.Host
		worker string
	}{{a, ha, "w1"}, {b, hb, "w9"}, {a, ha, "w2"}, {b, hb, "w1"}} {
		o := &streamObs{}
		arn, own := arnA, shardsA
		if w.e == b {
			arn, own = arnB, shardsB
		}
		logs := quiet
		if len(runs) == 0 {
			logs = slog.New(warned)
		}
		runs = append(runs, run{arn, own, o, runAsync(w.e.readerLogging(t, w.h, w.worker, o, logs))})
	}
	a.waitRows(t, wantA, 30*time.Second)
	b.waitRows(t, wantB, 30*time.Second)
	time.Sleep(time.Second) // several lease rounds more, with leases expiring and taken over
	for i, r := range runs {
		select {
		case err := <-r.stop.done:
			t.Fatalf("worker %d stopped by itself: %v", i, err)
		default:
		}
	}
	for i, r := range runs {
		for s := range r.obs.everHeld() {
			assert.True(t, r.own[s], "worker %d (stream %s) held shard %s of the other stream", i, r.stream, s)
		}
	}
	all, err := lease.NewTable(a.Client, a.cfg.Sidecar.LeaseTable).List(ctx)
	require.NoError(t, err)
	for _, l := range all {
		switch {
		case shardsA[l.Key]:
			assert.Equal(t, arnA, l.Stream, "lease %s", l.Key)
		case shardsB[l.Key]:
			assert.Equal(t, arnB, l.Stream, "lease %s", l.Key)
		}
	}
	f, err := sidecar.ReadFleet(ctx, a.cfg, a.Client, a.streamsClient(t), sidecar.FleetOptions{})
	require.NoError(t, err)
	for _, s := range f.Shards {
		assert.True(t, shardsA[s.ID], "the fleet view of stream A shows shard %s", s.ID)
	}
	assert.Equal(t, len(shardsB), f.OtherStreams[arnB], "the fleet view counts the other stream's leases")
	for i, r := range runs {
		assert.NoError(t, r.stop.stop(nil), "worker %d", i)
	}
	assert.Equal(t, 1, warned.count("the lease table holds leases of another stream"), "logged once by a worker")
}

// sibling is an env on the same server and lease table with its own
// event table and read-model table (created), as a second fleet.
func (e *env) sibling(t testing.TB, name string) *env {
	t.Helper()
	cfg := *e.cfg
	cfg.EventStore.Table = e.cfg.EventStore.Table + "-" + name
	cfg.Projections = append([]host.ProjectionConfig(nil), e.cfg.Projections...)
	cfg.Projections[0].Table = e.cfg.Projections[0].Table + "-" + name
	side := *e.cfg.Sidecar
	cfg.Sidecar = &side
	s := &env{Env: e.Env, cfg: &cfg, faults: &faults{}, clock: e.clock}
	if _, err := s.host(t, &testlogic.Ledger{}).CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// streamObs records every shard a worker ever held.
type streamObs struct {
	sidecar.NopObserver
	mu   sync.Mutex
	held map[string]bool
}

func (o *streamObs) LeasesHeld(_, _ string, held []string, _ int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.held == nil {
		o.held = map[string]bool{}
	}
	for _, s := range held {
		o.held[s] = true
	}
}

func (o *streamObs) everHeld() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := make(map[string]bool, len(o.held))
	for s := range o.held {
		m[s] = true
	}
	return m
}
