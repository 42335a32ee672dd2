package telemetry

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
)

// FreshnessWindow is the span of the freshness the status shows against
// the objectives: the last hour, in one-minute slots.
const FreshnessWindow = time.Hour

const freshnessSlots = 60

// freshnessState keeps each projection's freshness of the last hour, per
// minute, as the histogram's bucket counts.
type freshnessState struct {
	bounds     []float64
	objectives map[string][]host.Objective // by projection
	order      []string                    // projections with objectives, in configuration order

	mu      sync.Mutex
	windows map[string]*[freshnessSlots]freshnessSlot
}

type freshnessSlot struct {
	minute int64 // Unix minute the counts are of
	counts []int64
}

func newFreshnessHistogram(bounds []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "freshness_seconds",
		Help:    "Time from a change's creation (its stream record's ApproximateCreationDateTime, else the event's timestamp) to the commit of the row write that applied it, per event applied.",
		Buckets: bounds}, []string{"projection"})
}

func (f *freshnessState) init(objectives []host.Objective) {
	f.bounds = host.FreshnessBounds(objectives)
	f.objectives = map[string][]host.Objective{}
	f.windows = map[string]*[freshnessSlots]freshnessSlot{}
	for _, o := range objectives {
		if _, ok := f.objectives[o.Projection]; !ok {
			f.order = append(f.order, o.Projection)
		}
		f.objectives[o.Projection] = append(f.objectives[o.Projection], o)
	}
}

// observeFreshness records the freshness of every event the batch applied,
// per projection: in the histogram and in the last hour's slots.
func (m *Metrics) observeFreshness(res *host.Result) {
	now := m.now()
	minute := now.Unix() / 60
	for name := range res.Projections {
		var counts []int64
		var h prometheus.Observer
		res.Freshness(name, func(d time.Duration) {
			if counts == nil {
				counts = make([]int64, len(m.fresh.bounds)+1)
				h = m.freshness.WithLabelValues(name)
			}
			s := d.Seconds()
			h.Observe(s)
			counts[sort.SearchFloat64s(m.fresh.bounds, s)]++
		})
		if counts == nil {
			continue
		}
		m.fresh.mu.Lock()
		w := m.fresh.windows[name]
		if w == nil {
			w = new([freshnessSlots]freshnessSlot)
			m.fresh.windows[name] = w
		}
		sl := &w[minute%freshnessSlots]
		if sl.minute != minute || sl.counts == nil {
			sl.minute, sl.counts = minute, make([]int64, len(counts))
		}
		for i, c := range counts {
			sl.counts[i] += c
		}
		m.fresh.mu.Unlock()
	}
}

// FreshnessReports returns each projection's freshness over the last hour
// against its objectives: the projections with objectives, in
// configuration order, then any other that applied events, by name.
func (m *Metrics) FreshnessReports() []host.FreshnessReport {
	m.fresh.mu.Lock()
	defer m.fresh.mu.Unlock()
	now := m.now().Unix() / 60
	names := slices.Clone(m.fresh.order)
	var others []string
	for name := range m.fresh.windows {
		if _, ok := m.fresh.objectives[name]; !ok {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	var out []host.FreshnessReport
	for _, name := range append(names, others...) {
		r := host.FreshnessReport{Projection: name, Window: FreshnessWindow, Bounds: slices.Clone(m.fresh.bounds),
			Counts: make([]int64, len(m.fresh.bounds)+1), Objectives: slices.Clone(m.fresh.objectives[name])}
		if w := m.fresh.windows[name]; w != nil {
			for _, sl := range w {
				if sl.counts != nil && now-sl.minute < freshnessSlots {
					for i, c := range sl.counts {
						r.Counts[i] += c
					}
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// objectiveDesc reports each declared objective's threshold, so dashboards
// and alerts can draw the line without the configuration.
var objectiveDesc = prometheus.NewDesc(Namespace+"_freshness_objective_seconds",
	"A projection's freshness objective: the threshold within which the objective's percentile of events must be applied.",
	[]string{"projection", "objective"}, nil)

type objectiveCollector struct{ m *Metrics }

func (c objectiveCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectiveDesc }

func (c objectiveCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.m.fresh.order {
		for _, o := range c.m.fresh.objectives[name] {
			ch <- prometheus.MustNewConstMetric(objectiveDesc, prometheus.GaugeValue, o.Threshold.Seconds(), name, o.Name)
		}
	}
}
