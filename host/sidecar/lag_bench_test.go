package sidecar_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// BenchmarkChangeFeedLag appends events at a steady rate while one worker
// (default poll interval: 1 s would dominate, so 50 ms here, as a busy
// deployment would configure) reads the feed, and reports the lag from
// each event's append call to the batch that wrote its row returning:
// p50, p99 and max, in milliseconds. shards=8/workers=4/rate=N does the
// same with four workers on eight shards, every request to ddblocal taking
// 5 ms, from 64 appenders; it also reports the lag from each append's
// return (-ack) and the append rate reached (appends/s).
//
//	go test ./host/sidecar -run '^$' -bench BenchmarkChangeFeedLag -benchtime 1x -count 3
func BenchmarkChangeFeedLag(b *testing.B) {
	for _, rate := range []int{200, 1000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			var lags []time.Duration
			for n := 0; n < b.N; n++ {
				lags = steadyLag(b, rate, 3*time.Second)
			}
			slices.Sort(lags)
			q := func(p float64) float64 {
				return float64(lags[int(p*float64(len(lags)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(q(1), "max-ms")
			b.ReportMetric(float64(len(lags)), "events")
		})
	}
	for _, rate := range []int{250, 1000} {
		b.Run(fmt.Sprintf("shards=8/workers=4/rate=%d", rate), func(b *testing.B) {
			var fromCall, fromAck []time.Duration
			var reached float64
			for n := 0; n < b.N; n++ {
				fromCall, fromAck, reached = fleetLag(b, rate, 3*time.Second)
			}
			for _, l := range []struct {
				lags []time.Duration
				unit string
			}{{fromCall, ""}, {fromAck, "-ack"}} {
				slices.Sort(l.lags)
				q := func(p float64) float64 {
					return float64(l.lags[int(p*float64(len(l.lags)-1))].Microseconds()) / 1000
				}
				b.ReportMetric(q(0.5), "p50"+l.unit+"-ms")
				b.ReportMetric(q(0.99), "p99"+l.unit+"-ms")
			}
			b.ReportMetric(float64(len(fromCall)), "events")
			b.ReportMetric(reached, "appends/s")
		})
	}
}

// fleetLag is steadyLag on eight shards read by four workers, every
// request taking 5 ms: 64 stream instances, each appended to by its own
// goroutine at rate/64 events per second (one append takes a round trip,
// so one goroutine could not keep the pace). It returns each event's lag
// from its append call and from the append's return (0 when it was folded
// before the append returned), and the append rate reached.
func fleetLag(b *testing.B, rate int, d time.Duration) (fromCall, fromAck []time.Duration, reached float64) {
	const instances = 64
	e := benchStart(b, 8, host.SidecarConfig{BatchSize: 100, PollInterval: host.Duration(50 * time.Millisecond), LeaseDuration: host.Duration(time.Second)})
	h := e.host(b, &testlogic.Ledger{})
	obs := &foldedObserver{at: map[string]time.Time{}}
	var stops []func(error) error
	for w := 0; w < 4; w++ {
		stops = append(stops, run(e.reader(b, e.host(b, &testlogic.Ledger{}), fmt.Sprint("w", w), obs)))
	}
	waitHeld(b, e, 8, 4, 2)
	b.ResetTimer()
	per := int(d.Seconds() * float64(rate) / instances)
	every := time.Second * instances / time.Duration(rate)
	t0 := time.Now()
	var mu sync.Mutex
	called, acked := map[string]time.Time{}, map[string]time.Time{}
	var wg sync.WaitGroup
	for i := 0; i < instances; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%02d", i)
			start := t0.Add(every * time.Duration(i) / instances) // spread over the period
			for v := 0; v < per; v++ {
				if wait := time.Until(start.Add(time.Duration(v) * every)); wait > 0 {
					time.Sleep(wait)
				}
				k := fmt.Sprintf("%s#%d", id, v+1)
				c := time.Now()
				if _, err := h.Append(context.Background(), testlogic.Stream, id, uint64(v), host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}}); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				called[k], acked[k] = c, time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	reached = float64(per*instances) / time.Since(t0).Seconds()
	total := per * instances
	deadline := time.Now().Add(time.Minute)
	for {
		obs.mu.Lock()
		n := len(obs.at)
		obs.mu.Unlock()
		if n >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	for _, stop := range stops {
		_ = stop(nil)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.at) < total {
		b.Fatalf("%d of %d events folded", len(obs.at), total)
	}
	for k, at := range obs.at {
		fromCall = append(fromCall, at.Sub(called[k]))
		fromAck = append(fromAck, max(at.Sub(acked[k]), 0))
	}
	return fromCall, fromAck, reached
}

// foldedObserver notes when each event was first in a batch processed
// without a failure.
type foldedObserver struct {
	sidecar.NopObserver
	mu sync.Mutex
	at map[string]time.Time // "<streamId>#<version>"
}

func (o *foldedObserver) BatchProcessed(_, _ string, res *host.Result, _ time.Duration, err error) {
	if err != nil || res == nil || len(res.Failed()) > 0 {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range res.Events {
		k := fmt.Sprintf("%s#%d", ev.StreamID, ev.Version)
		if _, ok := o.at[k]; !ok {
			o.at[k] = now
		}
	}
}

// steadyLag appends rate events per second for d (one event per stream
// instance, 16 instances in turn) and returns each event's lag.
func steadyLag(b *testing.B, rate int, d time.Duration) []time.Duration {
	e := start(b, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 100, PollInterval: host.Duration(50 * time.Millisecond)})
	h := e.host(b, &testlogic.Ledger{})
	obs := &lagObserver{appended: map[string]time.Time{}}
	stop := run(e.reader(b, e.host(b, &testlogic.Ledger{}), "w", obs))
	time.Sleep(200 * time.Millisecond) // the lease is taken
	b.ResetTimer()
	total := int(d.Seconds() * float64(rate))
	every := time.Second / time.Duration(rate)
	t0 := time.Now()
	versions := map[string]int{}
	for i := 0; i < total; i++ {
		if wait := time.Until(t0.Add(time.Duration(i) * every)); wait > 0 {
			time.Sleep(wait)
		}
		id := fmt.Sprintf("s%d", i%16)
		obs.mu.Lock() // noted before the append: its record may be read before the append returns
		obs.appended[fmt.Sprintf("%s#%d", id, versions[id]+1)] = time.Now()
		obs.mu.Unlock()
		appendAdds(b, h, id, versions[id], 1)
		versions[id]++
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		obs.mu.Lock()
		n := len(obs.lags)
		obs.mu.Unlock()
		if n >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	_ = stop(nil)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.lags) < total {
		b.Fatalf("%d of %d events written", len(obs.lags), total)
	}
	return obs.lags
}

// lagObserver notes, for every event of a batch processed without a
// failure, the time since its append returned.
type lagObserver struct {
	countObserver
	mu       sync.Mutex
	appended map[string]time.Time // "<streamId>#<version>"
	lags     []time.Duration
}

func (o *lagObserver) BatchProcessed(_, _ string, res *host.Result, _ time.Duration, err error) {
	if err != nil || res == nil || len(res.Failed()) > 0 {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ev := range res.Events {
		k := fmt.Sprintf("%s#%d", ev.StreamID, ev.Version)
		if t, ok := o.appended[k]; ok {
			o.lags = append(o.lags, now.Sub(t))
			delete(o.appended, k)
		}
	}
}
