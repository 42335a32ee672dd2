package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
)

// VerifyPass is the last continuous verification pass this worker ran for
// a projection, as the status shows it.
type VerifyPass struct {
	Projection string
	At         time.Time
	Took       time.Duration
	Counts     host.VerifyCounts
	Err        string // the pass could not run
}

// verifyMetrics are the continuous verification's metrics, and the last
// pass of each projection (guarded by Metrics.mu).
type verifyMetrics struct {
	drift      *prometheus.GaugeVec
	unverified *prometheus.GaugeVec
	rows       *prometheus.CounterVec
	passes     *prometheus.CounterVec
	pending    *prometheus.GaugeVec
	last       *prometheus.GaugeVec
	passed     map[string]VerifyPass
}

func newVerifyMetrics() verifyMetrics {
	return verifyMetrics{
		drift: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "verify_drift_rows",
			Help: "Rows the last sampled verification pass found wrong, by kind (differs, missing, orphan, ahead): alert when above 0."}, []string{"projection", "kind"}),
		unverified: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "verify_unverified_rows",
			Help: "Rows the last sampled verification pass could not check (the plugin fails one of their events, a row unreadable): neither right nor wrong, not verified; alert when above 0."}, []string{"projection"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "verify_rows_checked_total",
			Help: "Rows checked by the sampled verification passes."}, []string{"projection"}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "verify_passes_total",
			Help: "Sampled verification passes this worker ran, by result (ok, unverified: some rows could not be checked, error: the pass could not run)."}, []string{"projection", "result"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "verify_pending_events",
			Help: "Events younger than the grace that the rows of the last pass lacked: lag, not drift."}, []string{"projection"}),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "verify_last_pass_timestamp_seconds",
			Help: "When the last sampled verification pass of this worker finished (Unix seconds)."}, []string{"projection"}),
		passed: map[string]VerifyPass{},
	}
}

func (v verifyMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{v.drift, v.unverified, v.rows, v.passes, v.pending, v.last}
}

// Verified records a continuous verification pass (host/sidecar's
// VerifyObserver): the drift found per kind, the rows that could not be
// checked (a pass with some is counted as result "unverified", not "ok"),
// the rows checked, the events pending; err set when it could not run.
func (m *Metrics) Verified(projection string, c host.VerifyCounts, at time.Time, took time.Duration, err error) {
	pass := VerifyPass{Projection: projection, At: at, Took: took, Counts: c}
	if err != nil {
		pass.Err = err.Error()
		m.verify.passes.WithLabelValues(projection, "error").Inc()
	} else {
		result := "ok"
		if c.Errors > 0 {
			result = "unverified"
		}
		m.verify.passes.WithLabelValues(projection, result).Inc()
		m.verify.unverified.WithLabelValues(projection).Set(float64(c.Errors))
		for kind, n := range map[host.FindingKind]int{host.FindingDiffers: c.Differs, host.FindingMissing: c.Missing,
			host.FindingOrphan: c.Orphan, host.FindingAhead: c.Ahead} {
			m.verify.drift.WithLabelValues(projection, string(kind)).Set(float64(n))
		}
		m.verify.rows.WithLabelValues(projection).Add(float64(c.Rows))
		m.verify.pending.WithLabelValues(projection).Set(float64(c.Pending))
		m.verify.last.WithLabelValues(projection).Set(float64(at.UnixMilli()) / 1000)
	}
	m.mu.Lock()
	m.verify.passed[projection] = pass
	m.mu.Unlock()
}

// verifyPasses returns the last pass of each projection, by projection
// (m.mu held).
func (m *Metrics) verifyPasses() []VerifyPass { return byProjection(m.verify.passed) }
