package sidecar_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// kinesisStream is the Kinesis data stream the K2 tests' event tables
// stream their changes to.
const kinesisStream = "changes"

// startKinesis is start with the event table streaming its changes to a
// Kinesis data stream of shards shards (with the faults f), which the
// readers read (sidecar.kinesis).
func startKinesis(t testing.TB, shards int, f ddblocal.KinesisFaults, side host.SidecarConfig) *env {
	t.Helper()
	side.Kinesis = &host.KinesisConfig{Stream: kinesisStream}
	return startWith(t, func(o *ddblocal.Options) {
		o.Kinesis = ddblocal.KinesisOptions{OnDemandShards: shards, Faults: f}
	}, side)
}

// checkKinesisSpans asserts that no two workers processed a shard at the
// same time and that every shard's first batch started after the last
// batch of each of its parents (two after a merge) ended.
func checkKinesisSpans(t *testing.T, spans []span, ls map[string]leaseRow) map[string]int {
	t.Helper()
	byShard := map[string][]span{}
	perWorker := map[string]int{}
	for _, s := range spans {
		byShard[s.shard] = append(byShard[s.shard], s)
		perWorker[s.worker]++
	}
	for shard, ss := range byShard {
		for _, a := range ss {
			for _, b := range ss {
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
		for _, p := range strings.Split(l.parents, ",") {
			for _, ps := range byShard[p] {
				assert.False(t, first.Before(ps.to), "shard %s started before its parent %s ended", shard, p)
			}
		}
	}
	return perWorker
}

// adjacentOpen returns two open shards of the stream whose hash key ranges
// meet, the lower first.
func adjacentOpen(t *testing.T, e *env) (string, string) {
	t.Helper()
	shards, err := e.Server.KinesisShards(context.Background(), kinesisStream)
	require.NoError(t, err)
	for _, a := range shards {
		for _, b := range shards {
			if !a.Open() || !b.Open() {
				continue
			}
			hi, _ := new(big.Int).SetString(a.EndingHashKey, 10)
			lo, _ := new(big.Int).SetString(b.StartingHashKey, 10)
			if hi != nil && lo != nil && hi.Add(hi, big.NewInt(1)).Cmp(lo) == 0 {
				return a.ShardID, b.ShardID
			}
		}
	}
	t.Fatal("no two adjacent open shards")
	return "", ""
}

func TestK2_ThreeWorkersOnEightShardsThroughSplitAndMergeFoldEveryRow(t *testing.T) {
	e := startKinesis(t, 8, ddblocal.KinesisFaults{DuplicateRate: 0.2, ReorderRate: 0.2, Seed: 25}, host.SidecarConfig{BatchSize: 20})
	e.Server.SetFaults(ddblocal.FaultConfig{Latency: 2 * time.Millisecond}) // every request a round trip, so reads and lease writes interleave
	var spans []span
	var mu sync.Mutex
	var stops []func(error) error
	for _, w := range []string{"w1", "w2", "w3"} {
		stops = append(stops, run(e.reader(t, e.host(t, &testlogic.Ledger{}), w, newRecorder(w, &spans, &mu))))
	}
	h := e.host(t, &testlogic.Ledger{})
	const ids = 24
	want := map[string]string{}
	appended := 0
	appendRound := func(from, n int) {
		for v := from; v < from+n; v++ {
			for i := 0; i < ids; i++ {
				appendAdds(t, h, fmt.Sprintf("k%d", i), v, 1)
				appended++
			}
		}
		for i := 0; i < ids; i++ {
			want[fmt.Sprintf("k%d", i)] = foldLog(from + n) // the independent fold: versions 1..n in order
		}
	}
	ctx := context.Background()
	appendRound(0, 3)
	shards, err := e.Server.KinesisShards(ctx, kinesisStream)
	require.NoError(t, err)
	kids, err := e.Server.SplitKinesisShard(ctx, kinesisStream, shards[0].ShardID)
	require.NoError(t, err)
	appendRound(3, 3)
	a, b := adjacentOpen(t, e)
	merged, err := e.Server.MergeKinesisShards(ctx, kinesisStream, a, b)
	require.NoError(t, err)
	appendRound(6, 3)
	e.waitRows(t, want, time.Minute)
	for _, stop := range stops {
		require.NoError(t, stop(nil))
	}

	ls := e.leases(t)
	parents := strings.Split(ls[merged].parents, ",")
	slices.Sort(parents)
	both := []string{a, b}
	slices.Sort(both)
	assert.Equal(t, both, parents, "the merged shard's lease names both parents")
	for _, k := range kids {
		assert.Equal(t, shards[0].ShardID, ls[k].parents)
	}
	mu.Lock()
	defer mu.Unlock()
	perWorker := checkKinesisSpans(t, spans, ls)
	assert.Len(t, perWorker, 3, "every worker read: %v", perWorker)
	read := 0
	readShards := map[string]bool{}
	for _, s := range spans {
		read += s.records
		readShards[s.shard] = true
	}
	assert.True(t, readShards[merged], "the merged shard was read")
	assert.True(t, readShards[kids[0]] || readShards[kids[1]], "the split's children were read")
	assert.Greater(t, read, appended, "the destination wrote duplicates, and every row is still right")
	t.Logf("batches per worker %v; %d records read for %d events", perWorker, read, appended)
}

func TestK2_KilledWorkersShardsAreTakenOver(t *testing.T) {
	const duration = 900 * time.Millisecond
	e := startKinesis(t, 4, ddblocal.KinesisFaults{DuplicateRate: 0.2, ReorderRate: 0.2, Seed: 7}, host.SidecarConfig{BatchSize: 10, LeaseDuration: host.Duration(duration)})
	var spans []span
	var mu sync.Mutex
	stopA := run(e.reader(t, e.host(t, &testlogic.Ledger{}), "a", newRecorder("a", &spans, &mu)))
	stopB := run(e.reader(t, e.host(t, &testlogic.Ledger{}), "b", newRecorder("b", &spans, &mu)))
	h := e.host(t, &testlogic.Ledger{})
	const ids = 12
	want := map[string]string{}
	appendRound := func(from, n int) {
		for v := from; v < from+n; v++ {
			for i := 0; i < ids; i++ {
				appendAdds(t, h, fmt.Sprintf("x%d", i), v, 1)
			}
		}
		for i := 0; i < ids; i++ {
			want[fmt.Sprintf("x%d", i)] = foldLog(from + n)
		}
	}
	appendRound(0, 3)
	e.waitRows(t, want, time.Minute)
	// Both workers hold shards before a is killed: the first rows can be
	// folded before the second worker has taken its share.
	var ofA []string
	waitFor(t, 30*time.Second, "workers a and b both hold shards", func() bool {
		ofA = ofA[:0]
		held := map[string]int{}
		for k, l := range e.leases(t) {
			held[l.owner]++
			if l.owner == "a" {
				ofA = append(ofA, k)
			}
		}
		return held["a"] > 0 && held["b"] > 0
	})
	require.ErrorIs(t, stopA(sidecar.ErrAbandoned), sidecar.ErrAbandoned)
	killed := time.Now()
	appendRound(3, 3)
	e.waitRows(t, want, time.Minute)
	ls := e.leases(t)
	for _, k := range ofA {
		assert.Equal(t, "b", ls[k].owner, "shard %s of the killed worker taken over", k)
	}
	require.NoError(t, stopB(nil))
	mu.Lock()
	defer mu.Unlock()
	for _, s := range spans {
		if s.worker == "a" {
			assert.False(t, s.from.After(killed), "the killed worker read nothing after it was killed")
		}
	}
	checkKinesisSpans(t, spans, ls)
}
