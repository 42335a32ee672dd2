package sidecar_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// benchLatency is what every request to ddblocal costs in these
// benchmarks, as a network round trip to DynamoDB would.
const benchLatency = 5 * time.Millisecond

// BenchmarkChangeFeed measures `host run`'s reader, native ledger logic,
// on a ddblocal stream whose every request takes 5 ms:
//
//   - shards=8/workers=N: N workers (1, 2, 4) share a stream of eight open
//     shards. They take their leases and balance on the empty stream; a
//     backlog is then appended while a gate holds each shard's first batch
//     inside ProcessBatch, and events/s is from the gate's opening to the
//     last event processed. in-processBatch is the time spent inside
//     ProcessBatch summed over the shards, per second of wall time (how
//     many batches ran at once, on average); cpu-us/event and cores are
//     the CPU time of the whole process (ddblocal included) per event and
//     per wall second. Each worker folds on a modelled core of its own
//     (modelCorePerEvent), as workers on machines of their own would.
//     imbalance is the busiest worker's events over the mean: the shards'
//     keys are hashed, so their loads differ, and the busiest worker's
//     share bounds the speed-up (workers ÷ imbalance at best).
//
//   - kinesis/shards=8/workers=N: shards=8/workers=N on the Kinesis data
//     stream the event table streams to (sidecar.kinesis): eight shards,
//     every request 5 ms, GetRecords paced to Kinesis's 5 calls per second
//     per shard.
//
//   - shards=8/workers=N/shared-cpu: the same with every worker folding
//     natively on the test machine's shared cores (one process): what
//     more workers add when CPU, not the fleet, is the limit.
//
//   - shards=8/workers=1/shared-cpu/verify=1%: shards=8/workers=1/shared-cpu
//     without and with continuous verification of a 1% sample every
//     second (sidecar.verify), side by side: events/s, verify-events/s
//     and their ratio; cpu-us/event, verify-cpu-us/event and cpu-ratio.
//
//   - shards=1/workers=1: one shard, same backlog: events/s against what
//     ProcessBatch alone would do (batch size ÷ its processing time,
//     proc-events/s); overlap is their ratio, 1 when reading and
//     checkpointing hide entirely behind processing.
//
//   - shards=8/takeover: four workers on eight shards, lease duration 1 s;
//     one is killed without cleanup (ErrAbandoned); takeover-ms is from
//     the kill until the others hold all its shards, bound-ms the lease
//     duration plus one lease round.
//
//     go test ./host/sidecar -run '^$' -bench 'BenchmarkChangeFeed$' -benchtime 1x -count 3
func BenchmarkChangeFeed(b *testing.B) {
	for _, shared := range []bool{false, true} {
		for _, workers := range []int{1, 2, 4} {
			name := fmt.Sprintf("shards=8/workers=%d", workers)
			perEvent := modelCorePerEvent
			if shared {
				name, perEvent = name+"/shared-cpu", 0
			}
			b.Run(name, func(b *testing.B) {
				var r drained
				for n := 0; n < b.N; n++ {
					r = drainGated(b, 8, workers, perEvent)
				}
				b.ReportMetric(r.rate, "events/s")
				b.ReportMetric(r.busy, "in-processBatch")
				b.ReportMetric(r.cpu, "cpu-us/event")
				b.ReportMetric(r.cores, "cores")
				b.ReportMetric(r.imbalance, "imbalance")
			})
		}
	}
	for _, workers := range []int{1, 2, 4} {
		// the same drain on the Kinesis data stream the event table
		// streams to (sidecar.kinesis), GetRecords paced to 5 calls per
		// second per shard as Kinesis allows
		b.Run(fmt.Sprintf("kinesis/shards=8/workers=%d", workers), func(b *testing.B) {
			var r drained
			for n := 0; n < b.N; n++ {
				r = drainGatedOn(b, benchStartKinesis, 8, workers, modelCorePerEvent, nil)
			}
			b.ReportMetric(r.rate, "events/s")
			b.ReportMetric(r.busy, "in-processBatch")
			b.ReportMetric(r.cpu, "cpu-us/event")
			b.ReportMetric(r.cores, "cores")
			b.ReportMetric(r.imbalance, "imbalance")
		})
	}
	b.Run("shards=8/workers=1/shared-cpu/verify=1%", func(b *testing.B) {
		// the same drain with and without continuous verification of a
		// 1% sample every second, side by side: events/s of each and
		// their ratio, the passes run during the drain, and the process's
		// CPU time per event of each (ddblocal's scans included) and their
		// ratio, which a loaded machine disturbs less than the rates
		var without, with drained
		for n := 0; n < b.N; n++ {
			without = drainGatedWith(b, 8, 1, 0, nil)
			with = drainGatedWith(b, 8, 1, 0, func(s *host.SidecarConfig) {
				s.Verify = &host.VerifyConfig{Every: host.Duration(time.Second), Sample: 0.01}
			})
		}
		b.ReportMetric(without.rate, "events/s")
		b.ReportMetric(with.rate, "verify-events/s")
		b.ReportMetric(with.rate/without.rate, "ratio")
		b.ReportMetric(float64(with.passes), "passes")
		b.ReportMetric(with.cpu, "verify-cpu-us/event")
		b.ReportMetric(without.cpu, "cpu-us/event")
		b.ReportMetric(with.cpu/without.cpu, "cpu-ratio")
	})
	b.Run("shards=1/workers=1", func(b *testing.B) {
		var r drained
		for n := 0; n < b.N; n++ {
			r = drainGated(b, 1, 1, 0)
		}
		b.ReportMetric(r.rate, "events/s")
		b.ReportMetric(r.procRate, "proc-events/s")
		b.ReportMetric(r.rate/r.procRate, "overlap")
		b.ReportMetric(r.cpu, "cpu-us/event")
		b.ReportMetric(r.cores, "cores")
	})
	b.Run("shards=8/takeover", func(b *testing.B) {
		var took, bound time.Duration
		for n := 0; n < b.N; n++ {
			took, bound = takeoverOfKilled(b)
		}
		b.ReportMetric(float64(took.Milliseconds()), "takeover-ms")
		b.ReportMetric(float64(bound.Milliseconds()), "bound-ms")
	})
}

// drained is what drainGated measured.
type drained struct {
	rate     float64 // events/s, gate to last event
	procRate float64 // events per second of ProcessBatch time, batches started after the gate
	busy     float64 // ProcessBatch time per wall second, likewise
	cpu      float64 // the process's CPU time per event, in microseconds
	cores    float64 // the process's CPU time per wall second
	// imbalance is the events folded by the busiest worker over the mean
	// of the workers (1: an even spread; the shards' keys are hashed, so
	// their loads differ as DynamoDB's partitions' do)
	imbalance float64
	passes    int64 // continuous verification passes run from the start of the workers to the end of the drain
}

// gatedObserver counts the records of batches processed without a
// failure, and the records and ProcessBatch time of those that started
// after the gate opened (the first batch of each shard waited at the gate).
type gatedObserver struct {
	sidecar.NopObserver
	opened           atomic.Int64 // unix nanoseconds; 0 while closed
	done             atomic.Int64
	afterN, afterDur atomic.Int64
	passes           atomic.Int64 // continuous verification passes
}

// Verified implements sidecar.VerifyObserver.
func (o *gatedObserver) Verified(string, host.VerifyCounts, time.Time, time.Duration, error) {
	o.passes.Add(1)
}

func (o *gatedObserver) BatchProcessed(_, _ string, res *host.Result, took time.Duration, err error) {
	if err != nil || res == nil || len(res.Failed()) > 0 {
		return
	}
	o.done.Add(int64(res.Records))
	if at := o.opened.Load(); at != 0 && time.Now().Add(-took).UnixNano() >= at {
		o.afterN.Add(int64(res.Records))
		o.afterDur.Add(int64(took))
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchStart is ddblocal with shards open shards per stream and 5 ms per
// request, and the tables.
func benchStart(b *testing.B, shards int, side host.SidecarConfig) *env {
	e := start(b, ddblocal.StreamOptions{Shards: shards}, side)
	e.Server.SetFaults(ddblocal.FaultConfig{Latency: benchLatency})
	return e
}

// benchStartKinesis is benchStart with the event table streaming to a
// Kinesis data stream of shards shards, which the readers read.
func benchStartKinesis(b *testing.B, shards int, side host.SidecarConfig) *env {
	e := startKinesis(b, shards, ddblocal.KinesisFaults{}, side)
	e.Server.SetFaults(ddblocal.FaultConfig{Latency: benchLatency})
	return e
}

// waitHeld waits until the lease table shows every one of the shards held
// and each worker holding at least min.
func waitHeld(b *testing.B, e *env, shards, workers, min int) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		own := e.owners(b)
		total, ok := 0, len(own) == workers
		for _, n := range own {
			total += n
			ok = ok && n >= min
		}
		if ok && total == shards {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("leases not spread after 2 min: %v", own)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// modelCorePerEvent is the fold time of one event on a worker's own
// core in the shards=8/workers=N benchmarks: each worker stands for a
// machine of its own, so it folds one event at a time (its core, a mutex)
// and each event folded holds that core this long (a sleep: no CPU of the machine
// running the benchmark, whose two cores every worker shares). Events/s
// then shows how the fleet spreads the work, not how many cores the test
// machine has; the /shared-cpu variants fold natively on the shared cores.
const modelCorePerEvent = time.Millisecond

// drainGated appends a backlog to a stream of shards open shards, read by
// workers workers, and measures its draining; perEvent > 0 gives each
// worker a modelled core of its own (see modelCorePerEvent).
func drainGated(b *testing.B, shards, workers int, perEvent time.Duration) drained {
	return drainGatedWith(b, shards, workers, perEvent, nil)
}

// drainGatedWith is drainGated with the sidecar section edited by edit
// (nil: as is).
func drainGatedWith(b *testing.B, shards, workers int, perEvent time.Duration, edit func(*host.SidecarConfig)) drained {
	return drainGatedOn(b, benchStart, shards, workers, perEvent, edit)
}

// drainGatedOn is drainGatedWith on the environment startEnv starts:
// benchStart (a DynamoDB stream) or benchStartKinesis.
func drainGatedOn(b *testing.B, startEnv func(*testing.B, int, host.SidecarConfig) *env, shards, workers int, perEvent time.Duration, edit func(*host.SidecarConfig)) drained {
	const ids, per, chunk = 800, 20, 5
	side := host.SidecarConfig{BatchSize: 100, PollInterval: host.Duration(10 * time.Millisecond), LeaseDuration: host.Duration(time.Second)}
	if edit != nil {
		edit(&side)
	}
	e := startEnv(b, shards, side)
	gate := make(chan struct{})
	cnt := &gatedObserver{}
	var stops []func(error) error
	folded := make([]atomic.Int64, workers)
	for w := 0; w < workers; w++ {
		var core sync.Mutex
		l := &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) {
			<-gate
			folded[w].Add(int64(len(req.Events)))
			if perEvent > 0 {
				core.Lock()
				time.Sleep(time.Duration(len(req.Events)) * perEvent)
				core.Unlock()
			}
		}}
		stops = append(stops, run(e.reader(b, e.host(b, l), fmt.Sprint("w", w), cnt)))
	}
	waitHeld(b, e, shards, workers, shards/workers)
	// the backlog: chunks of 5 events, stream instances interleaved, from
	// 64 appenders
	h := e.host(b, &testlogic.Ledger{})
	var wg sync.WaitGroup
	var next atomic.Int64
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= ids*per/chunk {
					return
				}
				id, v := k%ids, (k/ids)*chunk
				evs := make([]host.NewEvent, chunk)
				for i := range evs {
					evs[i] = host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(fmt.Sprint(v + i + 1))}}
				}
				if _, err := h.Append(context.Background(), testlogic.Stream, fmt.Sprint("g", id), uint64(v), evs...); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	b.ResetTimer()
	t0, cpu0 := time.Now(), cpuTime()
	cnt.opened.Store(t0.UnixNano())
	close(gate)
	for cnt.done.Load() < ids*per {
		if time.Since(t0) > 5*time.Minute {
			b.Fatalf("%d of %d events processed in 5 min", cnt.done.Load(), ids*per)
		}
		time.Sleep(time.Millisecond)
	}
	el, cpu := time.Since(t0), cpuTime()-cpu0
	passes := cnt.passes.Load()
	b.StopTimer()
	for _, stop := range stops {
		_ = stop(nil)
	}
	want := map[string]string{}
	for i := 0; i < ids; i++ {
		want[fmt.Sprint("g", i)] = foldLog(per)
	}
	e.waitRows(b, want, time.Minute)
	took := time.Duration(cnt.afterDur.Load())
	var most, all int64
	for i := range folded {
		most, all = max(most, folded[i].Load()), all+folded[i].Load()
	}
	return drained{passes: passes, imbalance: float64(most) * float64(workers) / float64(all), rate: float64(ids*per) / el.Seconds(), procRate: float64(cnt.afterN.Load()) / took.Seconds(), busy: float64(took) / float64(el),
		cpu: float64(cpu.Microseconds()) / (ids * per), cores: cpu.Seconds() / el.Seconds()}
}

// takeoverOfKilled runs four workers on eight shards, kills one once they
// are balanced and returns how long the others took to hold all its
// shards, and the bound: the lease duration plus one lease round.
func takeoverOfKilled(b *testing.B) (took, bound time.Duration) {
	const lease = time.Second
	e := benchStart(b, 8, host.SidecarConfig{PollInterval: host.Duration(10 * time.Millisecond), LeaseDuration: host.Duration(lease)})
	var runs []*runner
	for w := 0; w < 4; w++ {
		runs = append(runs, runAsync(e.reader(b, e.host(b, &testlogic.Ledger{}), fmt.Sprint("w", w), nil)))
	}
	waitHeld(b, e, 8, 4, 2)
	var killed []string
	for k, l := range e.leases(b) {
		if l.owner == "w0" {
			killed = append(killed, k)
		}
	}
	t0 := time.Now()
	if err := runs[0].stop(sidecar.ErrAbandoned); err != sidecar.ErrAbandoned {
		b.Fatalf("abandoned run: %v", err)
	}
	deadline := t0.Add(time.Minute)
	for {
		ls := e.leases(b)
		all := true
		for _, k := range killed {
			if o := ls[k].owner; o == "" || o == "w0" {
				all = false
			}
		}
		if all {
			took = time.Since(t0)
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the killed worker's shards %v not taken over in a minute", killed)
		}
		time.Sleep(time.Millisecond)
	}
	for _, r := range runs[1:] {
		_ = r.stop(nil)
	}
	return took, lease + lease/3
}
