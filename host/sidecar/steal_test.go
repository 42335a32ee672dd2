package sidecar_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestC3_AWorkerThatJoinsAsksForLeasesUntilBalanced seeds leases
// without parents, so every shard is available at once: the first worker
// takes them all, the second asks it for leases until they hold about
// half each, and no shard is processed by both at once. Rows
// still equal the sequential fold (the engine fills gaps from the event
// store whatever the order).
func TestC3_AWorkerThatJoinsAsksForLeasesUntilBalanced(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{ShardMaxRecords: 4}, host.SidecarConfig{BatchSize: 1})
	h := e.host(t, &testlogic.Ledger{})
	const ids, events = 6, 4
	want := map[string]string{}
	for v := 0; v < events; v++ {
		for i := 0; i < ids; i++ {
			appendAdds(t, h, fmt.Sprintf("x%d", i), v, 1)
		}
	}
	for i := 0; i < ids; i++ {
		want[fmt.Sprintf("x%d", i)] = foldLog(events)
	}
	ctx := context.Background()
	api := e.streamsClient(t)
	arn, err := feed.LatestStream(ctx, api, e.cfg.EventStore.Table)
	require.NoError(t, err)
	shards, err := feed.NewReader(api, arn, feed.Options{}).Shards(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(shards), 6)
	tb := lease.NewTable(e.Client, e.cfg.Sidecar.LeaseTable)
	for _, s := range shards {
		_, err := tb.Create(ctx, arn, s.ID, nil) // no parents: all available at once
		require.NoError(t, err)
	}

	// Each batch (one record) takes a second, so each shard (four records)
	// lasts several lease rounds: the joining worker has time to steal
	// before the shards end, even on a loaded machine.
	slow := func() *testlogic.Ledger {
		return &testlogic.Ledger{OnEvolve: func(*abi.EvolveRequest) { time.Sleep(time.Second) }}
	}
	var spans []span
	var mu sync.Mutex
	a, b := newRecorder("a", &spans, &mu), newRecorder("b", &spans, &mu)
	stopA := run(e.reader(t, e.host(t, slow()), "a", a))
	deadline := time.Now().Add(time.Minute)
	for {
		a.mu.Lock()
		n := a.heldMax
		a.mu.Unlock()
		if n == len(shards) || time.Now().After(deadline) {
			require.Equal(t, len(shards), n, "the only worker takes every available lease")
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopB := run(e.reader(t, e.host(t, slow()), "b", b))
	e.waitRows(t, want, 30*time.Second)
	require.NoError(t, stopB(nil))
	require.NoError(t, stopA(nil))

	b.mu.Lock()
	bHeld := b.heldMax
	b.mu.Unlock()
	assert.GreaterOrEqual(t, bHeld, 2, "the joining worker stole leases")
	assert.LessOrEqual(t, bHeld, (len(shards)+1)/2, "no more than its share")
	mu.Lock()
	defer mu.Unlock()
	perWorker := checkSpans(t, spans, nil)
	assert.Positive(t, perWorker["b"], "the stolen shards were read by b")
}
