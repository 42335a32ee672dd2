package sidecar_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// A second process started with the worker id of a running one refuses to
// start, naming the holder (its instance: host, process, start) and its
// shards; it takes and reads nothing, even while the first is in the
// middle of a batch.
func TestC5_ASecondProcessWithTheSameWorkerIDRefusesToStartNamingTheHolder(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 2}, host.SidecarConfig{BatchSize: 5, LeaseDuration: host.Duration(900 * time.Millisecond)})
	h := e.host(t, &testlogic.Ledger{})
	j := &journal{}
	g := newGate()
	first := e.reader(t, e.host(t, &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) { g.onEvolve(req.StreamID) }}), "w1", j.observer("first"))
	a := runAsync(first)
	defer a.stop(nil)
	defer g.release() // before the stop
	waitFor(t, 20*time.Second, "the first process holds both shards", func() bool { return e.owners(t)["w1"] == 2 })
	g.arm(func(id string) bool { return id == "held" })
	appendAdds(t, h, "held", 0, 1)
	<-g.blocked // the first process is in the middle of a batch

	second := e.reader(t, e.host(t, &testlogic.Ledger{}), "w1", j.observer("second"))
	b := runAsync(second)
	var err error
	select {
	case err = <-b.done:
	case <-time.After(20 * time.Second):
		b.cancel(nil)
		t.Fatalf("the second process with worker id w1 still runs after 20 s; it processed %d batches", len(j.snapshot()))
	}
	require.ErrorIs(t, err, sidecar.ErrDuplicateWorker)
	var de *sidecar.DuplicateWorkerError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, first.Instance(), de.Instance)
	assert.Len(t, de.Shards, 2)
	assert.False(t, de.Running)
	assert.Contains(t, err.Error(), `worker id "w1" is already used by another process`)
	assert.Contains(t, err.Error(), first.Instance())
	assert.Contains(t, err.Error(), de.Shards[0])
	assert.Contains(t, err.Error(), "--worker-id")
	for _, l := range e.leases(t) {
		assert.Equal(t, "w1", l.owner)
		assert.Equal(t, first.Instance(), l.instance, "shard %s: still the first process's", l.key)
	}
	g.release()
	appendAdds(t, h, "after", 0, 2)
	e.waitRows(t, map[string]string{"held": "1", "after": foldLog(2)}, 20*time.Second)
	for _, en := range j.snapshot() {
		assert.Equal(t, "first", en.worker, "the second process read nothing")
	}
}

// Two processes with one worker id that start at the same moment both
// pass the check at start (held there until both passed it) and take
// leases; neither can ever hold a lease the other holds, and once one sees
// the other's leases renewed, one of them stops with ErrDuplicateWorker
// (the later started, or the one holding nothing), releasing what it
// holds, while the other reads on and folds everything.
func TestC5_TwoProcessesStartedTogetherWithOneWorkerIDOneStopsTheOtherReadsOn(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 8}, host.SidecarConfig{BatchSize: 5, LeaseDuration: host.Duration(900 * time.Millisecond)})
	h := e.host(t, &testlogic.Ledger{})
	j := &journal{}
	var passed sync.WaitGroup
	passed.Add(2)
	both := func() { passed.Done(); passed.Wait() }
	ra := e.reader(t, e.host(t, &testlogic.Ledger{}), "w1", j.observer("a"))
	rb := e.reader(t, e.host(t, &testlogic.Ledger{}), "w1", j.observer("b"))
	sidecar.AfterStartCheck(ra, both)
	sidecar.AfterStartCheck(rb, both)
	a, b := runAsync(ra), runAsync(rb)
	want := map[string]string{}
	for i := 0; i < 16; i++ {
		appendAdds(t, h, fmt.Sprintf("d%02d", i), 0, 3)
		want[fmt.Sprintf("d%02d", i)] = foldLog(3)
	}
	var err error
	var stopped, other *runner
	var stoppedName string
	select {
	case err = <-a.done:
		stopped, other, stoppedName = a, b, "a"
	case err = <-b.done:
		stopped, other, stoppedName = b, a, "b"
	case <-time.After(30 * time.Second):
		t.Fatal("neither process stopped 30 s after they started with one worker id")
	}
	_ = stopped
	require.ErrorIs(t, err, sidecar.ErrDuplicateWorker, "%s stopped", stoppedName)
	var de *sidecar.DuplicateWorkerError
	require.ErrorAs(t, err, &de)
	assert.True(t, de.Running)
	e.waitRows(t, want, 30*time.Second)
	select {
	case err := <-other.done:
		t.Fatalf("both processes stopped; the other with %v", err)
	default:
	}
	require.NoError(t, other.stop(nil))
	es := j.snapshot()
	checkOneOwnerAtATime(t, es)
	assert.Empty(t, checkItemOrder(t, es), "no event delivered twice: the stopped process checkpointed and released")
	t.Logf("%s stopped: %v", stoppedName, err)
}
