package sidecar_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/internal/testlogic"
)

func TestC2_EveryEventFoldedAcrossRollingShardsWithGetRecordsFaults(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{ShardMaxRecords: 7}, host.SidecarConfig{})
	e.faults.every.Store(3) // every third GetRecords call fails on the wire
	h := e.host(t, &testlogic.Ledger{})
	const ids, events = 6, 8
	want := map[string]string{}
	for v := 0; v < events; v++ {
		for i := 0; i < ids; i++ {
			appendAdds(t, h, fmt.Sprintf("a%d", i), v, 1)
		}
	}
	for i := 0; i < ids; i++ {
		want[fmt.Sprintf("a%d", i)] = foldLog(events)
	}
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	stop := run(e.reader(t, h, "w1", obs))
	e.waitRows(t, want, 20*time.Second)
	require.NoError(t, stop(nil))

	assert.Positive(t, e.faults.fails.Load(), "faults were injected")
	ls := e.leases(t)
	require.Greater(t, len(ls), 5, "the stream rolled over to several shards")
	shards, err := e.Server.StreamShards(context.Background(), e.cfg.EventStore.Table)
	require.NoError(t, err)
	require.Len(t, ls, len(shards), "a lease per shard")
	open := 0
	for _, sh := range shards {
		l := ls[sh.ShardID]
		assert.Empty(t, l.owner, "shard %s: released on a graceful stop", l.key)
		if !sh.Open() {
			assert.Equal(t, lease.ShardEnd, l.checkpoint, "the closed shard %s is finished", l.key)
			continue
		}
		open++
		if sh.Records > 0 {
			assert.NotEqual(t, lease.TrimHorizon, l.checkpoint, "the open shard %s was checkpointed", l.key)
		}
	}
	assert.Equal(t, 4, open, "four shards open at once: %+v", ls)
	// every record read once per delivery, parents before children
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, s := range spans {
		total += s.records
	}
	assert.Equal(t, ids*events, total, "no record read twice without a failure")
}
