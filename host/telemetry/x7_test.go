package telemetry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// fakeClock is a clock the test sets.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// histogram returns the freshness histogram of the projection.
func histogram(t *testing.T, m *telemetry.Metrics, projection string) *dto.Histogram {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "dynafold_freshness_seconds" {
			continue
		}
		for _, s := range f.Metric {
			if match(s, map[string]string{"projection": projection}) {
				return s.Histogram
			}
		}
	}
	t.Fatalf("no dynafold_freshness_seconds{projection=%q}", projection)
	return nil
}

func cumulative(h *dto.Histogram, le float64) uint64 {
	for _, b := range h.Bucket {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	return 1 << 63
}

// The host's clock is the test's: events are appended at t0, and the batch
// commits at t0+37s. Records that carry ApproximateCreationDateTime (set
// 20 s before the append, as a change made earlier) are measured from it;
// records without one, and the event the batch lacks (gap-filled from the
// event store), from the event's timestamp. The histogram holds exactly
// those delays, the buckets bracket them, and the last hour's report
// compares them with the objectives until the hour has passed.
func TestX7_FreshnessHistogramBracketsTheInjectedDelay(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := &fakeClock{t: t0}
	f := opstest.Start(t, "")
	cfg := *f.Cfg
	cfg.Projections = []host.ProjectionConfig{f.Cfg.Projections[0]}
	cfg.Projections[0].Freshness = host.FreshnessConfig{"p95": host.Duration(30 * time.Second), "p99": host.Duration(2 * time.Minute)}
	h := f.NewHostFor(t, &cfg, host.WithClock(clk.now))
	m := telemetry.New(telemetry.Options{Now: clk.now, Objectives: cfg.Objectives()})

	appendTo := func(id string, n int) []host.Record {
		var nes []host.NewEvent
		for i := 1; i <= n; i++ {
			nes = append(nes, host.NewEvent{Type: "Add", Data: opstest.Add(i)})
		}
		evs, err := h.Append(ctx, testlogic.Stream, id, 0, nes...)
		require.NoError(t, err)
		return f.Records(evs...)
	}
	a, b := appendTo("a", 3), appendTo("b", 2)
	for i := range a {
		a[i].DynamoDB.ApproximateCreationDateTime = t0.Add(-20 * time.Second)
	}
	clk.set(t0.Add(37 * time.Second))
	res, err := h.ProcessBatch(ctx, []host.Record{a[0], a[2], b[0], b[1]}) // a's v2 is gap-filled
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	m.BatchProcessed("Acct", "shard-1", res, time.Millisecond, nil)

	var got []time.Duration
	res.Freshness("ledger", func(d time.Duration) { got = append(got, d) })
	assert.ElementsMatch(t, []time.Duration{57 * time.Second, 37 * time.Second, 57 * time.Second, 37 * time.Second, 37 * time.Second}, got)

	hist := histogram(t, m, "ledger")
	assert.Equal(t, uint64(5), hist.GetSampleCount())
	assert.InDelta(t, 2*57+3*37, hist.GetSampleSum(), 1e-9)
	assert.Equal(t, uint64(0), cumulative(hist, 30), "no event within 30 s")
	assert.Equal(t, uint64(5), cumulative(hist, 60), "every event within 60 s")
	assert.Equal(t, uint64(5), cumulative(hist, 120), "the p99 threshold is a bucket")

	reps := m.Status().Freshness
	require.Len(t, reps, 1)
	st := reps[0].Status()
	require.Len(t, st, 2)
	assert.Equal(t, "p95", st[0].Name)
	assert.Equal(t, int64(5), st[0].Events)
	assert.Equal(t, int64(0), st[0].Within)
	assert.False(t, st[0].Met, "p95 within 30s: none was")
	assert.True(t, st[0].Actual > 30*time.Second && st[0].Actual <= 60*time.Second, "estimated p95 %s lies in the bucket of the delays", st[0].Actual)
	assert.Equal(t, "p99", st[1].Name)
	assert.Equal(t, int64(5), st[1].Within)
	assert.True(t, st[1].Met, "p99 within 2m: all were")

	clk.set(t0.Add(62 * time.Minute)) // the hour has passed
	st = m.Status().Freshness[0].Status()
	assert.Equal(t, int64(0), st[0].Events, "the report covers the last hour only")
	assert.True(t, st[0].Met, "no event late in the last hour")
	assert.Equal(t, uint64(5), histogram(t, m, "ledger").GetSampleCount(), "the histogram keeps counting")
}

// The row's commit time is the host's clock after the write, and an event
// with neither a creation time nor a readable timestamp is left out.
func TestX7_FreshnessSkipsEventsWithoutACreationTime(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f := opstest.Start(t, "")
	h := f.NewHost(t, host.WithClock(clk.now))
	evs, err := h.Append(ctx, testlogic.Stream, "c", 0, host.NewEvent{Type: "Add", Data: opstest.Add(1)})
	require.NoError(t, err)
	ev := evs[0]
	ev.Timestamp = "not a time"
	recs := f.Records(ev)
	recs[0].DynamoDB.NewImage = h.EventItem(ev)
	clk.set(clk.now().Add(time.Minute))
	res, err := h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	require.True(t, res.Projections["ledger"].Rows[0].Written)
	assert.Equal(t, clk.now(), res.Projections["ledger"].Rows[0].Committed)
	n := 0
	res.Freshness("ledger", func(time.Duration) { n++ })
	assert.Zero(t, n)
}
