package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/deliver"
)

// OpsSource is what the metrics read about the downstream protection at
// each scrape: the paused projections and the delivery breakers; *host.Host
// is one. A source that is also a ThrottleSource (as *host.Host is) has
// its client's throttled DynamoDB requests exported too.
type OpsSource interface {
	Projections() []string
	IsPaused(projection string) bool
	Breakers() []host.BreakerStatus
}

// ThrottleSource reports the DynamoDB request attempts its client saw
// throttled so far, by operation name (host.Host.ThrottledRequests).
type ThrottleSource interface {
	ThrottledRequests() map[string]int64
}

// ServeOps makes the metrics and the status report src's paused
// projections and delivery breakers, read at each scrape.
func (m *Metrics) ServeOps(src OpsSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops = src
}

func (m *Metrics) opsSource() OpsSource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// observeRateWait counts the time each projection's batch waited for its
// rate limit.
func (m *Metrics) observeRateWait(res *host.Result) {
	for name, pr := range res.Projections {
		if pr.RateWait > 0 {
			m.rateWait.WithLabelValues(name).Add(pr.RateWait.Seconds())
		}
	}
}

var (
	pausedDesc = prometheus.NewDesc(Namespace+"_projection_paused",
		"1 while the projection is paused (host pause): its events are recorded, not applied, and caught up when it resumes; 0 otherwise.",
		[]string{"projection"}, nil)
	breakerStateDesc = prometheus.NewDesc(Namespace+"_delivery_breaker_state",
		"1 for the state the breaker in front of a projection's delivery target is in (closed, half-open, open), 0 for the others.",
		[]string{"projection", "target", "state"}, nil)
	breakerTransitionsDesc = prometheus.NewDesc(Namespace+"_delivery_breaker_transitions_total",
		"Transitions of a delivery breaker into each state.",
		[]string{"projection", "target", "to"}, nil)
	deliveriesRefusedDesc = prometheus.NewDesc(Namespace+"_delivery_refused_total",
		"Deliveries an open (or probing) breaker refused: the effects stay pending in the outbox, in order.",
		[]string{"projection", "target"}, nil)
	deliveriesFailedDesc = prometheus.NewDesc(Namespace+"_delivery_failures_total",
		"Deliveries through a breaker that failed with a retryable error.",
		[]string{"projection", "target"}, nil)
	inFlightDesc = prometheus.NewDesc(Namespace+"_delivery_in_flight",
		"Deliveries to a projection's target in progress now (bounded by outbox.deliver.maxInFlight).",
		[]string{"projection", "target"}, nil)
	throttledDesc = prometheus.NewDesc(Namespace+"_dynamodb_throttled_requests_total",
		"DynamoDB request attempts of the host's client refused for their rate (ProvisionedThroughputExceededException, ThrottlingException, RequestLimitExceeded), by operation; the client retries them with backoff, so they slow batches that succeed.",
		[]string{"operation"}, nil)
)

// opsCollector reports the paused projections and the breakers at scrape
// time.
type opsCollector struct{ m *Metrics }

func (c opsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pausedDesc, breakerStateDesc, breakerTransitionsDesc, deliveriesRefusedDesc, deliveriesFailedDesc, inFlightDesc, throttledDesc} {
		ch <- d
	}
}

func (c opsCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.opsSource()
	if src == nil {
		return
	}
	for _, p := range src.Projections() {
		v := 0.0
		if src.IsPaused(p) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, v, p)
	}
	for _, b := range src.Breakers() {
		for _, s := range deliver.BreakerStates {
			v := 0.0
			if b.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(breakerStateDesc, prometheus.GaugeValue, v, b.Projection, b.Target, s.String())
		}
		for _, t := range []struct {
			to string
			n  int64
		}{{"open", b.Opened}, {"half-open", b.HalfOpened}, {"closed", b.Closed}} {
			ch <- prometheus.MustNewConstMetric(breakerTransitionsDesc, prometheus.CounterValue, float64(t.n), b.Projection, b.Target, t.to)
		}
		ch <- prometheus.MustNewConstMetric(deliveriesRefusedDesc, prometheus.CounterValue, float64(b.Refused), b.Projection, b.Target)
		ch <- prometheus.MustNewConstMetric(deliveriesFailedDesc, prometheus.CounterValue, float64(b.Failures), b.Projection, b.Target)
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(b.InFlight), b.Projection, b.Target)
	}
	if ts, ok := src.(ThrottleSource); ok {
		for op, n := range ts.ThrottledRequests() {
			ch <- prometheus.MustNewConstMetric(throttledDesc, prometheus.CounterValue, float64(n), op)
		}
	}
}
