package telemetry

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
)

// outboxMetrics are the metrics of the sweeps of the projections' pending
// outbox effects (host/sidecar's SweepObserver).
type outboxMetrics struct {
	pending *prometheus.GaugeVec
	oldest  *prometheus.GaugeVec
	swept   *prometheus.CounterVec
	sweeps  *prometheus.CounterVec
	last    map[string]OutboxSweepStatus // by projection, under Metrics.mu: the status page's
}

// OutboxSweepStatus is the last sweep of a projection's pending effects
// this worker ran, as the status page shows it.
type OutboxSweepStatus struct {
	Projection string
	At         time.Time
	Pending    int           // effects committed and not delivered, as the sweep found them
	Rows       int           // rows they are in
	Oldest     time.Duration // age of the oldest, as far as its claim tells (0: unknown)
	Delivered  int           // delivered by the sweep
}

func newOutboxMetrics() outboxMetrics {
	return outboxMetrics{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "outbox_pending_effects",
			Help: "Effects committed but not yet delivered, as the last sweep of the outbox index found them (on the worker that sweeps)."}, []string{"projection"}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "outbox_pending_oldest_seconds",
			Help: "Age of the oldest pending effect at the last sweep, from its commit or last claim (0: none pending, or none claimed)."}, []string{"projection"}),
		swept: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "outbox_swept_effects_total",
			Help: "Effects the sweep delivered that no drainer held (left by a stopped process or a failed delivery)."}, []string{"projection"}),
		sweeps: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "outbox_sweeps_total",
			Help: "Sweeps of the pending outbox effects this worker ran, by result (ok, error, skipped: the delivery breaker is not closed)."}, []string{"projection", "result"}),
	}
}

func (o outboxMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{o.pending, o.oldest, o.swept, o.sweeps}
}

// OutboxSwept records a sweep of a projection's pending outbox effects
// (host/sidecar's SweepObserver): how many were pending and how old the
// oldest was, and how many the sweep delivered; err set when it failed. A
// sweep skipped while the delivery breaker is open counted what is pending
// all the same, and sets the gauges too.
func (m *Metrics) OutboxSwept(s host.OutboxSweep, at time.Time, err error) {
	o := m.outbox
	switch {
	case err != nil:
		o.sweeps.WithLabelValues(s.Projection, "error").Inc()
		return
	case s.Skipped != "":
		// the breaker is open: nothing delivered, but the effects that
		// wait for it were counted
		o.sweeps.WithLabelValues(s.Projection, "skipped").Inc()
	default:
		o.sweeps.WithLabelValues(s.Projection, "ok").Inc()
	}
	o.swept.WithLabelValues(s.Projection).Add(float64(s.Delivered))
	o.pending.WithLabelValues(s.Projection).Set(float64(s.Pending))
	age := 0.0
	if !s.Oldest.IsZero() && s.Pending > 0 {
		age = max(at.Sub(s.Oldest).Seconds(), 0)
	}
	o.oldest.WithLabelValues(s.Projection).Set(age)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outbox.last == nil {
		m.outbox.last = map[string]OutboxSweepStatus{}
	}
	m.outbox.last[s.Projection] = OutboxSweepStatus{Projection: s.Projection, At: at, Pending: s.Pending, Rows: s.Rows,
		Oldest: time.Duration(age * float64(time.Second)), Delivered: s.Delivered}
}

// outboxSweeps returns the last sweep of each projection, by name; m.mu
// is held.
func (m *Metrics) outboxSweeps() []OutboxSweepStatus { return byProjection(m.outbox.last) }

// byProjection returns the values of m (keyed by projection) sorted by key.
func byProjection[T any](m map[string]T) []T {
	out := make([]T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// NotSweeping drops the projection's pending gauges: another worker sweeps
// it now and exports them.
func (m *Metrics) NotSweeping(projection string) {
	m.outbox.pending.DeleteLabelValues(projection)
	m.outbox.oldest.DeleteLabelValues(projection)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.outbox.last, projection)
}
