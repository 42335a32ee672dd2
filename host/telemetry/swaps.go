package telemetry

import (
	"cmp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/swap"
)

// SwapSource reports the hot-swapped plugins; *host.Host is one.
type SwapSource interface {
	SwapStatus() []host.SwapStatus
}

// ServeSwaps makes the metrics (dynafold_plugin_swaps_total) and the status
// report src's hot swaps, read at each scrape.
func (m *Metrics) ServeSwaps(src SwapSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.swaps = src.SwapStatus
}

// SwapEvent is one event of a hot-swapped plugin, as the status page
// lists it.
type SwapEvent struct {
	Projection string
	swap.Event
}

// swapEvents returns every hot-swapped plugin's events, newest first.
func (m *Metrics) swapEvents(src func() []host.SwapStatus) []SwapEvent {
	if src == nil {
		return nil
	}
	var out []SwapEvent
	for _, st := range src() {
		for _, e := range st.Events {
			out = append(out, SwapEvent{Projection: st.Projection, Event: e})
		}
	}
	slices.SortStableFunc(out, func(a, b SwapEvent) int { return cmp.Compare(b.Time.UnixNano(), a.Time.UnixNano()) })
	return out
}

// swapsCollector reports dynafold_plugin_swaps_total by projection and
// result: swapped, rollback, refused, fallback.
type swapsCollector struct{ m *Metrics }

var swapsDesc = prometheus.NewDesc(Namespace+"_plugin_swaps_total",
	"Hot swaps of a projection's plugin by result: swapped (a new version serves), rollback, refused (a candidate the checks refused; the version serving kept serving), fallback (refused at start; an archived version serves).",
	[]string{"projection", "result"}, nil)

func (c swapsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- swapsDesc }

func (c swapsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	src := c.m.swaps
	c.m.mu.Unlock()
	if src == nil {
		return
	}
	for _, st := range src() {
		for _, r := range []struct {
			result string
			n      uint64
		}{{swap.ResultSwapped, st.Stats.Swaps - st.Stats.Rollbacks}, {swap.ResultRollback, st.Stats.Rollbacks},
			{swap.ResultRefused, st.Stats.Failed}, {swap.ResultFallback, st.Fallbacks}} {
			ch <- prometheus.MustNewConstMetric(swapsDesc, prometheus.CounterValue, float64(r.n), st.Projection, r.result)
		}
	}
}
