// Package telemetry turns what the host does into Prometheus metrics: a
// Metrics value owns its own registry (never the global one), implements
// the change-feed reader's Observer (host/sidecar), times every call into
// the projections' logic (host.WithCallObserver) and reports the plugin
// version serving each projection. It also keeps what a status page shows:
// the shards with their owner and lag, and the last records given up.
//
//	m := telemetry.New(telemetry.Options{})
//	h, _ := host.New(ctx, cfg, host.WithCallObserver(m.PluginCall))
//	m.ServePlugins(h)
//	http.Handle("/metrics", m.Handler())
package telemetry

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dynafold/dynafold/host"
)

// Namespace prefixes every metric name.
const Namespace = "dynafold"

// DefaultRecentFailures is how many given-up records Metrics keeps for the
// status page when Options.RecentFailures is 0.
const DefaultRecentFailures = 50

// Options configures New.
type Options struct {
	// RecentFailures is how many given-up records to keep in memory
	// (default DefaultRecentFailures).
	RecentFailures int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Objectives are the projections' freshness objectives
	// (host.Config.Objectives): the freshness histogram gets a bucket at
	// each threshold, and the status shows each against the last hour.
	Objectives []host.Objective
}

// Metrics is the host's metrics registry and the status it shows. Its
// methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	now func() time.Time
	shadowState

	iteratorAge   *prometheus.GaugeVec
	recordsRead   *prometheus.CounterVec
	batches       *prometheus.CounterVec
	batchDuration *prometheus.HistogramVec
	applied       *prometheus.CounterVec
	already       *prometheus.CounterVec
	rowsWritten   *prometheus.CounterVec
	rowsFailed    *prometheus.CounterVec
	recordsFailed *prometheus.CounterVec
	decodeFailed  *prometheus.CounterVec
	retries       *prometheus.CounterVec
	gapReads      *prometheus.CounterVec
	gapEvents     *prometheus.CounterVec
	conflicts     *prometheus.CounterVec
	newExisting   *prometheus.CounterVec
	givenUp       *prometheus.CounterVec
	leasesHeld    *prometheus.GaugeVec
	shardsTotal   *prometheus.GaugeVec
	pluginCalls   *prometheus.HistogramVec
	pluginErrors  *prometheus.CounterVec
	rejected      *prometheus.CounterVec
	skipped       *prometheus.CounterVec
	freshness     *prometheus.HistogramVec
	rateWait      *prometheus.CounterVec
	fresh         freshnessState
	totals        totals // what the status page counts
	verify        verifyMetrics
	outbox        outboxMetrics

	mu       sync.Mutex
	shards   map[shardKey]*shardState
	leases   map[string]leaseState // by stream
	recent   []Failure             // ring of the last given-up records
	next     int                   // next slot of recent
	keep     int
	versions func() map[string]string
	swaps    func() []host.SwapStatus
	ops      OpsSource
}

// New returns Metrics with every metric registered in a registry of its
// own, together with the Go runtime and process collectors.
func New(o Options) *Metrics {
	if o.RecentFailures <= 0 {
		o.RecentFailures = DefaultRecentFailures
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Metrics{reg: prometheus.NewRegistry(), now: o.Now, keep: o.RecentFailures,
		shards: map[shardKey]*shardState{}, leases: map[string]leaseState{}}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	m.iteratorAge = gauge("shard_iterator_age_seconds", "How far the shard's reader was behind the newest record at its last read.", "stream", "shard")
	m.recordsRead = counter("records_read_total", "Change-feed records read.", "stream")
	m.batches = counter("batches_total", "Batches handed to the host, by result (ok, error).", "stream", "result")
	m.batchDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "batch_duration_seconds",
		Help: "Time to process one batch.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"stream"})
	m.applied = counter("events_applied_total", "Events folded into rows (gap-filled ones included).", "projection")
	m.already = counter("events_already_applied_total", "Redelivered events the rows already had.", "projection")
	m.rowsWritten = counter("rows_written_total", "Rows written.", "projection")
	m.rowsFailed = counter("rows_failed_total", "Rows that failed (nothing written; their records are delivered again).", "projection")
	m.recordsFailed = counter("records_failed_total", "Records reported failed to the reader, to be delivered again.", "stream")
	m.decodeFailed = counter("decode_failures_total", "Records whose image did not decode.", "stream")
	m.retries = counter("write_retries_total", "Row write attempts beyond the first (lost conditional-write races).", "projection")
	m.gapReads = counter("gap_reads_total", "Reads of the event store to fill a gap in a row's events.", "projection")
	m.gapEvents = counter("gap_filled_events_total", "Events read from the event store to fill gaps.", "projection")
	m.conflicts = counter("conflicts_total", "Rows that failed on a conflict: every write race lost, or two sources disagreeing on a checkpoint.", "projection")
	m.newExisting = counter("new_rows_existing_total", "Rows whose batch began each of their streams, written without a read, that were there already: the write's condition failed and the row was read and written again (one round trip and one write unit more; see readNewRows).", "projection")
	m.givenUp = counter("records_given_up_total", "Records the failure policy gave up and sent to the on-failure destination.", "projection")
	m.leasesHeld = gauge("leases_held", "Shard leases this worker holds.", "worker", "stream")
	m.shardsTotal = gauge("shards", "Shards known for the stream.", "stream")
	m.pluginCalls = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "plugin_call_duration_seconds",
		Help: "Time of one call into a projection's plugin.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}, []string{"projection", "function"})
	m.pluginErrors = counter("plugin_call_errors_total", "Calls into a projection's plugin that failed.", "projection", "function")
	m.rejected = counter("events_rejected_total", "Events the plugin's evolve failed on and its terminal accepted as rejected (the row moves past them).", "projection")
	m.skipped = counter("events_skipped_total", "Events the plugin's evolve skipped.", "projection")
	m.fresh.init(o.Objectives)
	m.freshness = newFreshnessHistogram(m.fresh.bounds)
	m.rateWait = counter("rate_limit_wait_seconds_total", "Time batches waited for their projection's rate limit (rateLimit) before being applied.", "projection")
	m.verify = newVerifyMetrics()
	m.reg.MustRegister(m.verify.collectors()...)
	m.outbox = newOutboxMetrics()
	m.reg.MustRegister(m.outbox.collectors()...)
	m.reg.MustRegister(m.iteratorAge, m.recordsRead, m.batches, m.batchDuration, m.applied, m.already, m.rowsWritten,
		m.rowsFailed, m.recordsFailed, m.decodeFailed, m.retries, m.gapReads, m.gapEvents, m.conflicts, m.newExisting, m.givenUp,
		m.leasesHeld, m.shardsTotal, m.pluginCalls, m.pluginErrors, m.rejected, m.skipped, lagCollector{m}, pluginInfoCollector{m}, shadowCollector{m}, swapsCollector{m},
		m.freshness, m.rateWait, objectiveCollector{m}, opsCollector{m},
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry holding every metric, for callers that add
// their own or gather them.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// PluginCall records one call into a projection's logic; pass it to
// host.WithCallObserver.
func (m *Metrics) PluginCall(projection, function string, took time.Duration, err error) {
	m.pluginCalls.WithLabelValues(projection, function).Observe(took.Seconds())
	if err != nil {
		m.pluginErrors.WithLabelValues(projection, function).Inc()
	}
}
