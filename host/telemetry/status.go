package telemetry

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
)

// PluginSource names the plugin serving each projection; *host.Host is one.
type PluginSource interface {
	Projections() []string
	PluginVersion(projection string) (name, version string, err error)
}

// ServePlugins makes the metrics (dynafold_plugin_info) and the status
// report the plugin serving each of src's projections, read at each scrape,
// so a hot swap shows at once.
func (m *Metrics) ServePlugins(src PluginSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.versions = func() map[string]string {
		out := map[string]string{}
		for _, p := range src.Projections() {
			if name, v, err := src.PluginVersion(p); err == nil {
				out[p] = name + "@" + v
			}
		}
		return out
	}
}

// Shard is one shard as the status shows it.
type Shard struct {
	Stream, Shard string
	Owner         string        // this worker when it holds the shard's lease; "" otherwise
	Behind        time.Duration // iterator age at the last read
	Lag           time.Duration // Behind plus the time since the last read
	LastRead      time.Time     // zero: never read by this process
	Records       int64         // records read by this process
}

// Status is what the status page shows.
type Status struct {
	Shards   []Shard           // by stream, then shard
	Plugins  map[string]string // projection → name@version
	Failures []Failure         // the recent given-up records, newest first
	Leases   map[string]int    // stream → leases held by this worker
	Total    map[string]int    // stream → shards known
	Counters Counters          // what this process counted
	Swaps    []SwapEvent       // the hot-swapped plugins' events, newest first
	// Freshness is each projection's freshness over the last hour
	// against its objectives.
	Freshness []host.FreshnessReport
	// Paused lists the projections paused now (host pause).
	Paused []string
	// Breakers are the delivery breakers, by projection.
	Breakers []host.BreakerStatus
	Verify   []VerifyPass // the last continuous verification pass of each projection run by this worker
	// Outbox is the last sweep of each projection's pending effects, when
	// this worker is the fleet's sweeper.
	Outbox []OutboxSweepStatus
}

// Status returns a snapshot of the shards, plugins and recent failures.
func (m *Metrics) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	st := Status{Plugins: map[string]string{}, Leases: map[string]int{}, Total: map[string]int{}}
	seen := map[shardKey]bool{}
	owner := func(k shardKey) string {
		if l, ok := m.leases[k.stream]; ok && slices.Contains(l.held, k.shard) {
			return l.worker
		}
		return ""
	}
	for k, s := range m.shards {
		seen[k] = true
		st.Shards = append(st.Shards, Shard{Stream: k.stream, Shard: k.shard, Owner: owner(k), Behind: s.behind,
			Lag: s.behind + now.Sub(s.lastRead), LastRead: s.lastRead, Records: s.records})
	}
	for stream, l := range m.leases {
		st.Leases[stream], st.Total[stream] = len(l.held), l.total
		for _, sh := range l.held {
			if k := (shardKey{stream, sh}); !seen[k] {
				st.Shards = append(st.Shards, Shard{Stream: stream, Shard: sh, Owner: l.worker})
			}
		}
	}
	slices.SortFunc(st.Shards, func(a, b Shard) int { return cmp.Or(cmp.Compare(a.Stream, b.Stream), cmp.Compare(a.Shard, b.Shard)) })
	if m.versions != nil {
		st.Plugins = m.versions()
	}
	st.Counters, st.Swaps, st.Verify, st.Outbox = m.Counters(), m.swapEvents(m.swaps), m.verifyPasses(), m.outboxSweeps()
	if m.ops != nil {
		for _, p := range m.ops.Projections() {
			if m.ops.IsPaused(p) {
				st.Paused = append(st.Paused, p)
			}
		}
		st.Breakers = m.ops.Breakers()
	}
	for i := range m.recent {
		st.Failures = append(st.Failures, m.recent[(m.next+len(m.recent)-1-i)%len(m.recent)])
	}
	st.Freshness = m.FreshnessReports() // under the freshness lock, not m.mu
	return st
}

// lagCollector reports each shard's lag at scrape time: the iterator age
// at the last read plus the time since, so a stalled reader shows.
type lagCollector struct{ m *Metrics }

var lagDesc = prometheus.NewDesc(Namespace+"_shard_lag_seconds",
	"How far the shard's reader is behind now: its iterator age at the last read plus the time since that read.",
	[]string{"stream", "shard"}, nil)

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	now := c.m.now()
	for k, s := range c.m.shards {
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, (s.behind + now.Sub(s.lastRead)).Seconds(), k.stream, k.shard)
	}
}

// pluginInfoCollector reports the plugin serving each projection as a
// gauge of 1 labelled with its name and version.
type pluginInfoCollector struct{ m *Metrics }

var pluginInfoDesc = prometheus.NewDesc(Namespace+"_plugin_info",
	"The plugin serving each projection now (value 1, labelled with its name@version).",
	[]string{"projection", "plugin"}, nil)

func (c pluginInfoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pluginInfoDesc }

func (c pluginInfoCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	versions := c.m.versions
	c.m.mu.Unlock()
	if versions == nil {
		return
	}
	for p, v := range versions() {
		ch <- prometheus.MustNewConstMetric(pluginInfoDesc, prometheus.GaugeValue, 1, p, v)
	}
}

// LeaseRoundDone reports whether any lease round has been reported
// (LeasesHeld): a reader that shares shards through leases is ready only
// after its first one.
func (m *Metrics) LeaseRoundDone() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.leases) > 0
}

// LastLeaseRound returns when the latest lease round reported (LeasesHeld)
// ended, of any stream; zero before the first. A reader whose rounds fail
// (DynamoDB unreachable or throttled) reports none.
func (m *Metrics) LastLeaseRound() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var last time.Time
	for _, l := range m.leases {
		if l.at.After(last) {
			last = l.at
		}
	}
	return last
}

// IsPaused reports whether the status lists the projection as paused.
func (s Status) IsPaused(projection string) bool { return slices.Contains(s.Paused, projection) }

// HasFreshness reports whether the status has a freshness report of the
// projection.
func (s Status) HasFreshness(projection string) bool {
	return slices.ContainsFunc(s.Freshness, func(r host.FreshnessReport) bool { return r.Projection == projection })
}
