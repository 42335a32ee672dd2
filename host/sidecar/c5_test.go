package sidecar_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// balanced reports whether the lease table shows every readable shard held
// and each of workers holding at least two.
func (e *env) balanced(t testing.TB, workers ...string) bool {
	f, err := sidecar.ReadFleet(context.Background(), e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
	require.NoError(t, err)
	for _, s := range f.Shards {
		if s.State == sidecar.ShardUnowned {
			return false
		}
	}
	own := e.owners(t)
	for _, w := range workers {
		if own[w] < 2 {
			return false
		}
	}
	return true
}

// Three workers share a stream of eight open shards; two of them split
// while events are appended. Every event is folded once and in order per
// stream instance, every shard is processed by one worker at a time, each
// child only after its parent ended (whichever workers read them), and
// once balanced every worker holds at least two shards.
func TestC5_ThreeWorkersShareEightShardsThroughTwoSplitsWhileAppending(t *testing.T) {
	// Leases of 6 s: nothing here waits for one to expire, and a worker
	// starved of CPU on a loaded machine must not lose its shards before it
	// reads them (with 1.5 s, w3 once folded nothing).
	e := start(t, ddblocal.StreamOptions{Shards: 8}, host.SidecarConfig{BatchSize: 4, LeaseDuration: host.Duration(6 * time.Second)})
	j := &journal{}
	workers := []string{"w1", "w2", "w3"}
	runs := map[string]*runner{}
	for _, w := range workers[:2] {
		runs[w] = runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), w, j.observer(w)))
	}
	t0 := time.Now()
	waitFor(t, 30*time.Second, "w1 and w2 share the eight shards", func() bool { return e.balanced(t, "w1", "w2") })
	t.Logf("w1 and w2 balanced after %s", time.Since(t0))
	runs["w3"] = runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), "w3", j.observer("w3")))
	waitFor(t, 30*time.Second, "w3 joined: every worker holds two shards or more", func() bool { return e.balanced(t, workers...) })
	t.Logf("w3 balanced after %s", time.Since(t0))
	assert.Equal(t, 8, len(e.leases(t)), "eight shards, one lease each")

	h := e.host(t, &testlogic.Ledger{})
	ctx := context.Background()
	// 96 stream instances: their keys hash unevenly over the eight shards,
	// and with 24 a worker's two shards were sometimes both empty, so it had
	// nothing to fold (1 run in 4).
	const ids, versions = 96, 12
	split := func() {
		ss, err := e.Server.StreamShards(ctx, e.cfg.EventStore.Table)
		require.NoError(t, err)
		for _, s := range ss { // the open shard with the most records
			if s.Open() && s.ParentShardID == "" && s.Records > 0 {
				_, err := e.Server.SplitShard(ctx, e.cfg.EventStore.Table, s.ShardID)
				require.NoError(t, err)
				return
			}
		}
		t.Fatal("no open shard with records to split")
	}
	want := map[string]string{}
	for v := 0; v < versions; v++ {
		if v == 4 || v == 8 {
			split() // records before it in the parent, after it in a child
		}
		for i := 0; i < ids; i++ {
			appendAdds(t, h, fmt.Sprintf("k%03d", i), v, 1)
		}
	}
	for i := 0; i < ids; i++ {
		want[fmt.Sprintf("k%03d", i)] = foldLog(versions)
	}
	t.Logf("appended after %s", time.Since(t0))
	e.waitRows(t, want, 60*time.Second)
	t.Logf("folded after %s", time.Since(t0))
	waitFor(t, 30*time.Second, "balanced again over the ten open shards", func() bool { return e.balanced(t, workers...) })
	for _, w := range workers {
		require.NoError(t, runs[w].stop(nil))
	}

	parents := e.parents(t)
	require.Len(t, parents, 12, "eight shards, two of them split into two")
	es := j.snapshot()
	checkOneOwnerAtATime(t, es)
	assert.Empty(t, checkItemOrder(t, es), "no event delivered twice without a crash")
	assert.Equal(t, 4, checkParentsFirst(t, es, parents), "the four children were read")
	by := map[string]int{}
	for _, en := range es {
		by[en.worker] += len(en.events)
	}
	for _, w := range workers {
		assert.Positive(t, by[w], "%s folded events: %v", w, by)
	}
	for _, l := range e.leases(t) {
		assert.Empty(t, l.owner, "released on a graceful stop")
	}
}

// A worker that reads a shard to its end finds the shard's children
// through DescribeStream's child filter and reads them at once: the
// stream is listed in full only at the first lease round (the next full
// one is 100 s away).
func TestC5_AWorkerThatFinishesAShardReadsItsChildrenWithoutARestartOrAFullListing(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 3, LeaseDuration: host.Duration(5 * time.Minute)})
	h := e.host(t, &testlogic.Ledger{})
	j := &journal{}
	run := runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), "w1", j.observer("w1")))
	defer run.stop(nil)
	const ids = 6
	want := map[string]string{}
	for i := 0; i < ids; i++ {
		appendAdds(t, h, fmt.Sprintf("c%d", i), 0, 2)
		want[fmt.Sprintf("c%d", i)] = foldLog(2)
	}
	e.waitRows(t, want, 30*time.Second)
	ctx := context.Background()
	ss, err := e.Server.StreamShards(ctx, e.cfg.EventStore.Table)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	parent := ss[0].ShardID
	kids, err := e.Server.SplitShard(ctx, e.cfg.EventStore.Table, parent)
	require.NoError(t, err)
	for i := 0; i < ids; i++ {
		appendAdds(t, h, fmt.Sprintf("c%d", i), 2, 2)
		want[fmt.Sprintf("c%d", i)] = foldLog(4)
	}
	e.waitRows(t, want, 30*time.Second)

	assert.Equal(t, []string{"all", "CHILD_SHARDS of " + parent}, e.faults.described(),
		"one listing at start, then the children of the finished shard alone")
	ls := e.leases(t)
	assert.Equal(t, lease.ShardEnd, ls[parent].checkpoint)
	read := map[string]bool{}
	for _, en := range j.snapshot() {
		read[en.shard] = true
	}
	for _, k := range kids {
		assert.Equal(t, parent, ls[k].parents)
		assert.Equal(t, "w1", ls[k].owner, "both children taken")
	}
	assert.True(t, read[kids[0]] || read[kids[1]], "a child was read: %v", read)
	checkParentsFirst(t, j.snapshot(), e.parents(t))
}

// A child whose parent another worker still reads waits: the second
// worker lists the split, creates the children's leases, and takes none
// while the parent's last batch is held in the first worker; once it ends
// and is checkpointed, the children are read, one by the second worker
// (it asks for it, the first holding both), never before the parent's
// end.
func TestC5_AChildIsReadByAnotherWorkerOnlyAfterItsParentIsCheckpointedAtItsEnd(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50, LeaseDuration: host.Duration(900 * time.Millisecond)})
	h := e.host(t, &testlogic.Ledger{})
	j := &journal{}
	g := newGate()
	first := &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) { g.onEvolve(req.StreamID) }}
	a := runAsync(e.reader(t, e.host(t, first), "a", j.observer("a")))
	defer a.stop(nil)
	waitFor(t, 20*time.Second, "a holds the stream's shard", func() bool { return e.owners(t)["a"] == 1 })
	obsB := j.observer("b")
	b := runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), "b", obsB))
	defer b.stop(nil)

	ctx := context.Background()
	g.arm(func(id string) bool { return id == "gate" })
	appendAdds(t, h, "x", 0, 3)
	appendAdds(t, h, "gate", 0, 1)
	<-g.blocked // a is in the middle of the parent's last batch
	ss, err := e.Server.StreamShards(ctx, e.cfg.EventStore.Table)
	require.NoError(t, err)
	parent := ss[0].ShardID
	kids, err := e.Server.SplitShard(ctx, e.cfg.EventStore.Table, parent)
	require.NoError(t, err)
	for i := 0; i < 6; i++ {
		appendAdds(t, h, fmt.Sprintf("y%d", i), 0, 2)
	}
	// the children's leases exist (a's or b's full round listed them);
	// then three more rounds of b: it takes neither
	waitFor(t, 20*time.Second, "the children's leases are created", func() bool {
		ls := e.leases(t)
		return ls[kids[0]].key != "" && ls[kids[1]].key != ""
	})
	for len(obsB.rounds) > 0 {
		<-obsB.rounds
	}
	for n := 0; n < 3; n++ {
		held := <-obsB.rounds
		assert.Empty(t, held, "b takes no child while a reads their parent")
	}
	ls := e.leases(t)
	assert.NotEqual(t, lease.ShardEnd, ls[parent].checkpoint)
	for _, k := range kids {
		assert.Empty(t, ls[k].owner, "child %s waits for its parent", k)
		assert.Equal(t, parent, ls[k].parents)
	}
	g.release()

	want := map[string]string{"x": foldLog(3), "gate": "1"}
	for i := 0; i < 6; i++ {
		want[fmt.Sprintf("y%d", i)] = foldLog(2)
	}
	e.waitRows(t, want, 30*time.Second)
	// a took both children; b, holding none, asks a for one
	waitFor(t, 30*time.Second, "b holds a child", func() bool {
		ls := e.leases(t)
		return ls[kids[0]].owner == "b" || ls[kids[1]].owner == "b"
	})
	for i := 0; i < 12; i++ { // into both children
		appendAdds(t, h, fmt.Sprintf("z%d", i), 0, 2)
		want[fmt.Sprintf("z%d", i)] = foldLog(2)
	}
	e.waitRows(t, want, 30*time.Second)
	waitFor(t, 30*time.Second, "b reads a child", func() bool {
		for _, en := range j.snapshot() {
			if en.worker == "b" && slices.Contains(kids, en.shard) {
				return true
			}
		}
		return false
	})
	es := j.snapshot()
	assert.Equal(t, 2, checkParentsFirst(t, es, e.parents(t)))
	checkOneOwnerAtATime(t, es)
	assert.Empty(t, checkItemOrder(t, es))
}

// A worker killed in the middle of a batch leaves its leases held: the
// other workers take its shards only once the leases expired (a lease
// duration after their last write), and what it was processing is
// delivered again from its last checkpoint, in order.
func TestC5_AKilledWorkersShardsAreTakenOverOnceItsLeasesExpire(t *testing.T) {
	const duration = 1200 * time.Millisecond
	e := start(t, ddblocal.StreamOptions{Shards: 8}, host.SidecarConfig{BatchSize: 3, LeaseDuration: host.Duration(duration)})
	j := &journal{}
	g := newGate()
	workers := []string{"w1", "w2", "w3"}
	runs := map[string]*runner{}
	for _, w := range workers {
		l := &testlogic.Ledger{}
		if w == "w3" {
			l.OnEvolve = func(req *abi.EvolveRequest) { g.onEvolve(req.StreamID) }
		}
		runs[w] = runAsync(e.reader(t, e.host(t, l), w, j.observer(w)))
	}
	waitFor(t, 30*time.Second, "every worker holds two shards or more", func() bool { return e.balanced(t, workers...) })
	h := e.host(t, &testlogic.Ledger{})
	const ids, versions = 16, 6
	want := map[string]string{}
	for i := 0; i < ids; i++ {
		appendAdds(t, h, fmt.Sprintf("m%02d", i), 0, 2)
	}
	waitFor(t, 30*time.Second, "the first events are folded", func() bool {
		for i := 0; i < ids; i++ {
			if e.rowLog(t, fmt.Sprintf("m%02d", i)) != foldLog(2) {
				return false
			}
		}
		return true
	})
	g.arm(func(string) bool { return true })
	for i := 0; i < ids; i++ {
		appendAdds(t, h, fmt.Sprintf("m%02d", i), 2, versions-2)
		want[fmt.Sprintf("m%02d", i)] = foldLog(versions)
	}
	<-g.blocked // w3 is in the middle of a batch
	runs["w3"].cancel(sidecar.ErrAbandoned)
	killed := time.Now()
	g.release()
	require.ErrorIs(t, <-runs["w3"].done, sidecar.ErrAbandoned)
	lastWrite := map[string]time.Time{}
	f, err := sidecar.ReadFleet(context.Background(), e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
	require.NoError(t, err)
	for _, s := range f.Shards {
		if s.Owner == "w3" {
			lastWrite[s.ID] = s.Heartbeat
		}
	}
	require.GreaterOrEqual(t, len(lastWrite), 2, "the killed worker's leases stay held")

	e.waitRows(t, want, 60*time.Second)
	waitFor(t, 30*time.Second, "w1 and w2 hold every shard", func() bool { return e.owners(t)["w3"] == 0 && e.balanced(t, "w1", "w2") })
	for _, w := range workers[:2] {
		require.NoError(t, runs[w].stop(nil))
	}
	es := j.snapshot()
	checkOneOwnerAtATime(t, es)
	again := checkItemOrder(t, es)
	for shard, at := range lastWrite {
		var took time.Time
		for _, en := range es {
			if en.shard == shard && en.worker != "w3" && en.from.After(killed) {
				took = en.from
				break
			}
		}
		if took.IsZero() {
			continue // nothing new on that shard after the kill
		}
		// heartbeats are stored in milliseconds
		assert.False(t, took.Before(at.Add(duration-time.Millisecond)), "shard %s of the killed worker read again at %s, before its lease expired at %s",
			shard, took.Format(time.StampMilli), at.Add(duration).Format(time.StampMilli))
	}
	// only the killed worker's unfinished work is delivered again: at most
	// its batch in flight and the one whose checkpoint it was writing
	redelivered := 0
	for _, n := range again {
		redelivered += n
	}
	assert.LessOrEqual(t, redelivered, 2*3*len(lastWrite), "redelivered %v", again)
	t.Logf("redelivered after the kill: %v", again)
}

// Three workers hold three of nine shards each; a fourth that joins is
// below its share while nobody holds more than the share, and still gets
// two: it asks the workers holding two more than it.
func TestC5_AFourthWorkerGetsItsShareOfNineShards(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 9}, host.SidecarConfig{LeaseDuration: host.Duration(900 * time.Millisecond)})
	j := &journal{}
	workers := []string{"w1", "w2", "w3", "w4"}
	var runs []*runner
	for _, w := range workers[:3] {
		runs = append(runs, runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), w, j.observer(w))))
	}
	waitFor(t, 30*time.Second, "three workers hold three shards each", func() bool {
		own := e.owners(t)
		return own["w1"] == 3 && own["w2"] == 3 && own["w3"] == 3
	})
	runs = append(runs, runAsync(e.reader(t, e.host(t, &testlogic.Ledger{}), "w4", j.observer("w4"))))
	waitFor(t, 30*time.Second, "w4 holds two shards, the others two or three", func() bool {
		own := e.owners(t)
		for _, w := range workers {
			if own[w] < 2 || own[w] > 3 {
				return false
			}
		}
		return e.balanced(t, workers...)
	})
	h := e.host(t, &testlogic.Ledger{})
	want := map[string]string{}
	for i := 0; i < 18; i++ {
		appendAdds(t, h, fmt.Sprintf("n%02d", i), 0, 2)
		want[fmt.Sprintf("n%02d", i)] = foldLog(2)
	}
	e.waitRows(t, want, 30*time.Second)
	for _, r := range runs {
		require.NoError(t, r.stop(nil))
	}
	es := j.snapshot()
	checkOneOwnerAtATime(t, es)
	assert.Empty(t, checkItemOrder(t, es))
}
