package sidecar_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// checkSpans asserts that no two workers processed a shard at the same
// time and that every child's first batch started after its parents' last
// batch ended.
func checkSpans(t *testing.T, spans []span, ls map[string]leaseRow) map[string]int {
	t.Helper()
	byShard := map[string][]span{}
	perWorker := map[string]int{}
	for _, s := range spans {
		byShard[s.shard] = append(byShard[s.shard], s)
		perWorker[s.worker]++
	}
	for shard, ss := range byShard {
		for i := range ss {
			for j := range ss {
				a, b := ss[i], ss[j]
				if a.worker != b.worker && a.from.Before(b.to) && b.from.Before(a.to) {
					t.Errorf("shard %s processed by %s and %s at the same time", shard, a.worker, b.worker)
				}
			}
		}
	}
	for shard, l := range ls {
		if l.parents == "" || len(byShard[shard]) == 0 {
			continue
		}
		first := byShard[shard][0].from
		for _, s := range byShard[shard] {
			if s.from.Before(first) {
				first = s.from
			}
		}
		for _, ps := range byShard[l.parents] {
			assert.False(t, first.Before(ps.to), "shard %s started before its parent %s ended", shard, l.parents)
		}
	}
	return perWorker
}

func TestC3_WorkersShareRollingShardsOneOwnerAtATimeParentsFirstAndTakeOverAStoppedOne(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d workers", n), func(t *testing.T) { shareShards(t, n) })
	}
}

func shareShards(t *testing.T, n int) {
	// one lineage: one open shard at a time, whose holder the test stops
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 5}, host.SidecarConfig{BatchSize: 3})
	var spans []span
	var mu sync.Mutex
	workers := []string{"w1", "w2", "w3"}[:n]
	stops := map[string]func(error) error{}
	obs := map[string]*recorder{}
	for _, w := range workers {
		obs[w] = newRecorder(w, &spans, &mu)
		stops[w] = run(e.reader(t, e.host(t, &testlogic.Ledger{}), w, obs[w]))
	}
	h := e.host(t, &testlogic.Ledger{})
	const ids = 6
	want := map[string]string{}
	appendRound := func(from, n int) {
		for v := from; v < from+n; v++ {
			for i := 0; i < ids; i++ {
				appendAdds(t, h, fmt.Sprintf("s%d", i), v, 1)
			}
			time.Sleep(15 * time.Millisecond)
		}
		for i := 0; i < ids; i++ {
			want[fmt.Sprintf("s%d", i)] = foldLog(from + n)
		}
	}
	appendRound(0, 8)
	e.waitRows(t, want, 20*time.Second)

	// stop the worker holding the open shard: another takes it over at once
	var holder string
	for _, l := range e.leases(t) {
		if l.checkpoint != lease.ShardEnd {
			holder = l.owner
		}
	}
	require.NotEmpty(t, holder, "the open shard is held")
	require.NoError(t, stops[holder](nil))
	delete(stops, holder)
	t0 := time.Now()
	appendRound(8, 4)
	e.waitRows(t, want, 20*time.Second)
	took := time.Since(t0)
	for _, stop := range stops {
		require.NoError(t, stop(nil))
	}

	ls := e.leases(t)
	require.Greater(t, len(ls), 8, "the stream rolled over")
	mu.Lock()
	defer mu.Unlock()
	perWorker := checkSpans(t, spans, ls)
	assert.GreaterOrEqual(t, len(perWorker), 2, "the shards were shared: %v", perWorker)
	after := 0
	for _, s := range spans {
		if s.from.After(t0) {
			assert.NotEqual(t, holder, s.worker, "the stopped worker read nothing after its stop")
			after++
		}
	}
	assert.Positive(t, after)
	t.Logf("batches per worker %v; the appends after %s stopped were folded within %s", perWorker, holder, took)
}

func TestC3_CrashMidBatchLeasesTakenOverAfterExpiryEveryRowEqualsTheSequentialFold(t *testing.T) {
	const duration = 900 * time.Millisecond
	// one lineage: the crashed worker holds the only readable shard
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 6}, host.SidecarConfig{BatchSize: 4, LeaseDuration: host.Duration(duration)})
	slow := &testlogic.Ledger{OnEvolve: func(*abi.EvolveRequest) { time.Sleep(20 * time.Millisecond) }}
	h := e.host(t, &testlogic.Ledger{})
	const ids, events = 5, 6
	want := map[string]string{}
	for v := 0; v < events; v++ {
		for i := 0; i < ids; i++ {
			appendAdds(t, h, fmt.Sprintf("k%d", i), v, 1)
		}
	}
	for i := 0; i < ids; i++ {
		want[fmt.Sprintf("k%d", i)] = foldLog(events)
	}
	var spans []span
	var mu sync.Mutex
	crashed := newRecorder("crashed", &spans, &mu)
	stopA := run(e.reader(t, e.host(t, slow), "crashed", crashed))
	// wait until it is mid-way: some batches done, not all
	deadline := time.Now().Add(time.Minute)
	for {
		crashed.mu.Lock()
		n := crashed.batches
		crashed.mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.ErrorIs(t, stopA(sidecar.ErrAbandoned), sidecar.ErrAbandoned)
	owned := 0
	for _, l := range e.leases(t) {
		if l.owner == "crashed" {
			owned++
		}
	}
	require.Equal(t, 1, owned, "the crashed worker's lease was not released")

	t0 := time.Now()
	next := newRecorder("next", &spans, &mu)
	logB := &syncbuf.Buffer{}
	stopB := run(e.readerLogging(t, e.host(t, &testlogic.Ledger{}), "next", next, slog.New(slog.NewTextHandler(logB, nil))))
	e.waitRows(t, want, 30*time.Second)
	require.NoError(t, stopB(nil))
	mu.Lock()
	defer mu.Unlock()
	var firstB time.Time
	for _, s := range spans {
		if s.worker == "next" && (firstB.IsZero() || s.from.Before(firstB)) {
			firstB = s.from
		}
	}
	require.False(t, firstB.IsZero())
	assert.GreaterOrEqual(t, firstB.Sub(t0), duration, "the lease was taken over only once it expired")
	checkSpans(t, spans, e.leases(t))
	for _, l := range e.leases(t) {
		assert.NotEqual(t, "crashed", l.owner)
	}
	// While it waited, the new worker said why it read nothing, once.
	out := logB.String()
	assert.Equal(t, 1, strings.Count(out, "shards held by other workers"), "log:\n%s", out)
	assert.Contains(t, out, "owners=crashed")
	assert.Contains(t, out, "leaseDuration=900ms")
	_ = context.Background
}

func TestC3_RunWithoutTheLeaseTableSaysHowToCreateIt(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{})
	h := e.host(t, &testlogic.Ledger{})
	r := e.reader(t, h, "w1", nil, func(s *host.SidecarConfig) { s.LeaseTable = "no-such-table" })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.Run(ctx)
	require.ErrorIs(t, err, lease.ErrNoTable)
	assert.Contains(t, err.Error(), "host tables create")
	assert.Contains(t, err.Error(), "no-such-table")
}
