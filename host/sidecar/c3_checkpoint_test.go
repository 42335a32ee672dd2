package sidecar_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// sequence returns the sequence numbers of the stream's records, in order
// (one shard).
func (e *env) sequence(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	api := e.streamsClient(t)
	arn, err := feed.LatestStream(ctx, api, e.cfg.EventStore.Table)
	require.NoError(t, err)
	rd := feed.NewReader(api, arn, feed.Options{})
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 1)
	b, err := rd.Iterator(shards[0].ID, "").Next(ctx)
	require.NoError(t, err)
	var out []string
	for _, r := range b.Records {
		out = append(out, r.DynamoDB.SequenceNumber)
	}
	return out
}

// evolved sends the stream instance of each evolve call.
func evolved() (*testlogic.Ledger, chan string) {
	ch := make(chan string, 100)
	return &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) { ch <- req.StreamID }}, ch
}

// waitEvolve waits for an evolve call of stream instance id.
func waitEvolve(t *testing.T, ch chan string, id, what string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("after 20 s: %s", what)
		}
	}
}

// A batch's checkpoint is written while the next batch is processed: with
// the write of the first batch's checkpoint held on the wire, the second
// batch is folded; the second's checkpoint waits for the first's (the
// lease never goes back), and a graceful stop during the last write still
// stores the last record's checkpoint before the lease is released.
func TestC3_ACheckpointIsWrittenWhileTheNextBatchIsProcessed(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 2, LeaseDuration: host.Duration(10 * time.Second)})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 2)
	appendAdds(t, h, "b", 0, 2)
	seqs := e.sequence(t)
	require.Len(t, seqs, 4)
	ddb, ht := e.holding(t)
	ht.holding.Store(true)
	l, calls := evolved()
	r := e.readerWith(t, e.host(t, l), "w1", nil, ddb)
	run := runAsync(r)

	first := <-ht.held
	assert.Equal(t, seqs[1], first.checkpoint, "the first batch's checkpoint: its last record")
	waitEvolve(t, calls, "b", "the second batch was not processed while the first batch's checkpoint was being written")
	select {
	case w := <-ht.held:
		t.Fatalf("checkpoint %s written before the one before it landed", w.checkpoint)
	case <-time.After(50 * time.Millisecond): // the second write must wait for the first
	}
	close(first.release)
	second := <-ht.held
	assert.Equal(t, seqs[3], second.checkpoint)
	stopped := make(chan error, 1)
	go func() { stopped <- run.stop(nil) }() // a stop while the last checkpoint is on the wire
	close(second.release)
	require.NoError(t, <-stopped)
	ls := e.leases(t)
	require.Len(t, ls, 1)
	for _, lr := range ls {
		assert.Equal(t, seqs[3], lr.checkpoint, "the last record's checkpoint is stored")
		assert.Empty(t, lr.owner, "then the lease is released")
	}
	e.waitRows(t, map[string]string{"a": foldLog(2), "b": foldLog(2)}, 5*time.Second)
}

// A crash while a checkpoint is on the wire loses that write: the next
// owner starts after the last checkpoint that landed, so the batch whose
// checkpoint was being written and the batch in flight are delivered
// again, nothing before them, and the rows are still folded once.
func TestC3_ACrashDuringACheckpointWriteRedeliversOnlyTheBatchesSinceTheLastOneStored(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 2, LeaseDuration: host.Duration(600 * time.Millisecond)})
	h := e.host(t, &testlogic.Ledger{})
	for _, id := range []string{"a", "b", "c"} {
		appendAdds(t, h, id, 0, 2)
	}
	seqs := e.sequence(t)
	require.Len(t, seqs, 6)
	ddb, ht := e.holding(t)
	ht.holding.Store(true)
	g := newGate()
	g.arm(func(id string) bool { return id == "c" })
	first := e.readerWith(t, e.host(t, &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) { g.onEvolve(req.StreamID) }}), "first", nil, ddb)
	run := runAsync(first)
	w := <-ht.held
	require.Equal(t, seqs[1], w.checkpoint)
	close(w.release) // a's batch: checkpoint stored
	w = <-ht.held
	require.Equal(t, seqs[3], w.checkpoint) // b's batch: held on the wire
	<-g.blocked                             // c's batch in flight meanwhile
	run.cancel(sidecar.ErrAbandoned)
	g.release()
	require.ErrorIs(t, <-run.done, sidecar.ErrAbandoned)
	ls := e.leases(t)
	require.Len(t, ls, 1)
	for _, lr := range ls {
		assert.Equal(t, seqs[1], lr.checkpoint, "the held write was lost with the process")
		assert.Equal(t, "first", lr.owner, "a crashed process releases nothing")
	}

	j := &journal{}
	next := runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), "next", j.observer("next")))
	// the rows may be right already (the crashed process's last writes may
	// have landed): wait for the redelivery itself
	waitFor(t, 20*time.Second, "the next owner processed c's batch", func() bool {
		for _, en := range j.snapshot() {
			if slices.Contains(en.events, "c#2") {
				return true
			}
		}
		return false
	})
	e.waitRows(t, map[string]string{"a": foldLog(2), "b": foldLog(2), "c": foldLog(2)}, 20*time.Second)
	require.NoError(t, next.stop(nil))
	es := j.snapshot()
	var got []string
	for _, en := range es {
		got = append(got, en.events...)
	}
	assert.Equal(t, []string{"b#1", "b#2", "c#1", "c#2"}, got, "b's batch (checkpoint lost) and c's (in flight), not a's")
}
