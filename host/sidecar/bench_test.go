package sidecar_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// benchEvents appends ids stream instances of per events each, from 8
// goroutines, and returns the rows wanted.
func benchEvents(b *testing.B, h *host.Host, prefix string, ids, per int) map[string]string {
	var wg sync.WaitGroup
	want := map[string]string{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < ids; i += 8 {
				appendAdds(b, h, fmt.Sprintf("%s%d", prefix, i), 0, per)
			}
		}()
	}
	for i := 0; i < ids; i++ {
		want[fmt.Sprintf("%s%d", prefix, i)] = foldLog(per)
	}
	wg.Wait()
	return want
}

// BenchmarkChangeFeedBacklog measures the reader with the native logic,
// without latency: a backlog of events drained by 1, 2 and 3 workers (events/s from the start of the
// workers to the last row written); ProcessBatch fed directly with the same
// batches in the same run (direct-events/s) and their ratio; the share of
// the wall time spent inside ProcessBatch, summed over the workers
// (in-processBatch: the rest is the reader's own work and waits); and the
// time another worker takes to take over a stopped worker's shard, after a
// graceful stop (lease released) and after a crash (lease expired).
func BenchmarkChangeFeedBacklog(b *testing.B) {
	const ids, per = 400, 5
	for _, workers := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var drain, direct, busy float64
			for n := 0; n < b.N; n++ {
				e := start(b, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 400}, host.SidecarConfig{BatchSize: 100, PollInterval: host.Duration(5 * time.Millisecond)})
				h := e.host(b, &testlogic.Ledger{})
				want := benchEvents(b, h, "b", ids, per)
				direct = directRate(b, e, 100) // first, so neither side gets a warmer server
				runtime.GC()
				b.ResetTimer()
				t0 := time.Now()
				var stops []func(error) error
				cnt := &countObserver{}
				for w := 0; w < workers; w++ {
					stops = append(stops, run(e.reader(b, e.host(b, &testlogic.Ledger{}), fmt.Sprint("w", w), cnt)))
				}
				for cnt.done.Load() < ids*per && time.Since(t0) < 2*time.Minute {
					time.Sleep(time.Millisecond)
				}
				el := time.Since(t0)
				b.StopTimer()
				e.waitRows(b, want, 10*time.Second)
				for _, stop := range stops {
					_ = stop(nil)
				}
				drain = float64(ids*per) / el.Seconds()
				busy = float64(cnt.took.Load()) / float64(el)
			}
			b.ReportMetric(drain, "events/s")
			b.ReportMetric(direct, "direct-events/s")
			b.ReportMetric(drain/direct, "ratio")
			b.ReportMetric(busy, "in-processBatch")
		})
	}
	b.Run("takeover", func(b *testing.B) {
		var graceful, crashed time.Duration
		for n := 0; n < b.N; n++ {
			graceful = takeover(b, nil)
			crashed = takeover(b, sidecar.ErrAbandoned)
		}
		b.ReportMetric(float64(graceful.Milliseconds()), "graceful-ms")
		b.ReportMetric(float64(crashed.Milliseconds()), "crash-ms")
	})
}

// directRate reads the whole stream in batches of size and times
// ProcessBatch over them into a fresh read-model table.
func directRate(b *testing.B, e *env, size int) float64 {
	ctx := context.Background()
	cfg := *e.cfg
	cfg.Projections = append([]host.ProjectionConfig(nil), cfg.Projections...)
	cfg.Projections[0].Table += "-direct"
	h, err := host.New(ctx, &cfg, host.WithClient(e.Client), host.WithLogger(quiet), host.WithNative("ledger", &testlogic.Ledger{}))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.CreateTables(ctx); err != nil {
		b.Fatal(err)
	}
	api := e.streamsClient(b)
	arn, err := feed.LatestStream(ctx, api, cfg.EventStore.Table)
	if err != nil {
		b.Fatal(err)
	}
	rd := feed.NewReader(api, arn, feed.Options{BatchSize: size, PollInterval: time.Millisecond})
	var batches [][]host.Record
	finished := map[string]bool{}
	for {
		shards, err := rd.Shards(ctx)
		if err != nil {
			b.Fatal(err)
		}
		ready := feed.Ready(shards, finished)
		progressed := false
		for _, sh := range ready {
			it := rd.Iterator(sh.ID, "")
			for {
				bt, err := it.Next(ctx)
				for try := 0; err != nil && try < 5; try++ { // the client-side closed-connection race (aws-sdk-go-v2#2737)
					bt, err = it.Next(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
				if len(bt.Records) > 0 {
					batches = append(batches, bt.Records)
				}
				if bt.Finished {
					finished[sh.ID], progressed = true, true
					break
				}
				if len(bt.Records) == 0 {
					break
				}
			}
		}
		if !progressed {
			break
		}
	}
	t0 := time.Now()
	events := 0
	for _, bt := range batches {
		res, err := h.ProcessBatch(ctx, bt)
		if err != nil || len(res.Failed()) > 0 {
			b.Fatalf("direct batch failed: %v", err)
		}
		events += len(bt)
	}
	return float64(events) / time.Since(t0).Seconds()
}

// takeover runs worker a on a shard, stops it (gracefully with a nil
// cause, or abandoned) and returns how long worker b, already running,
// took to hold the shard.
func takeover(b *testing.B, cause error) time.Duration {
	e := start(b, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{LeaseDuration: host.Duration(time.Second)})
	h := e.host(b, &testlogic.Ledger{})
	appendAdds(b, h, "t", 0, 1)
	stopA := run(e.reader(b, h, "a", nil))
	e.waitRows(b, map[string]string{"t": "1"}, 10*time.Second)
	held := make(chan time.Time, 16)
	obs := &holdObserver{held: held}
	stopB := run(e.reader(b, e.host(b, &testlogic.Ledger{}), "b", obs))
	time.Sleep(100 * time.Millisecond) // b is running, holding nothing
	t0 := time.Now()
	_ = stopA(cause)
	at := <-held
	_ = stopB(nil)
	return at.Sub(t0)
}

// countObserver counts the records of batches processed without a failure.
type countObserver struct {
	sidecar.NopObserver
	done atomic.Int64
	took atomic.Int64 // time in ProcessBatch, summed over the workers
}

func (o *countObserver) BatchProcessed(_, _ string, res *host.Result, took time.Duration, err error) {
	o.took.Add(int64(took))
	if err == nil && res != nil && len(res.Failed()) == 0 {
		o.done.Add(int64(res.Records))
	}
}

type holdObserver struct {
	sidecar.NopObserver
	once sync.Once
	held chan time.Time
}

func (o *holdObserver) LeasesHeld(_, _ string, held []string, _ int) {
	if len(held) > 0 {
		o.once.Do(func() { o.held <- time.Now() })
	}
}
