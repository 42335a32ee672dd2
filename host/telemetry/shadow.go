package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynafold/dynafold/host"
)

// ShadowSource reports the shadow plugins running beside the live ones;
// *host.Host is one.
type ShadowSource interface {
	ShadowStats() []host.ShadowStats
}

// ServeShadows makes the metrics report src's shadow plugins, read at each
// scrape: rows compared (dynafold_shadow_rows_total), rows where the
// candidate differed from the live plugin (dynafold_shadow_differences_total)
// and batches it could not run on (dynafold_shadow_failures_total), each
// labelled with the projection and the candidate's name@version. A shadow
// stops being reported once it is promoted.
func (m *Metrics) ServeShadows(src ShadowSource) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shadows = src
}

var (
	shadowRowsDesc = prometheus.NewDesc(Namespace+"_shadow_rows_total",
		"Rows a shadow plugin computed beside the live plugin (it never writes).", []string{"projection", "candidate"}, nil)
	shadowDiffsDesc = prometheus.NewDesc(Namespace+"_shadow_differences_total",
		"Rows where the shadow plugin's result differed from the live plugin's (each is logged with the row's key).", []string{"projection", "candidate"}, nil)
	shadowFailsDesc = prometheus.NewDesc(Namespace+"_shadow_failures_total",
		"Batches the shadow plugin could not run on.", []string{"projection", "candidate"}, nil)
)

// shadowState is what ServeShadows adds to Metrics (guarded by its mu).
type shadowState struct {
	shadows ShadowSource
}

type shadowCollector struct{ m *Metrics }

func (c shadowCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- shadowRowsDesc
	ch <- shadowDiffsDesc
	ch <- shadowFailsDesc
}

func (c shadowCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	src := c.m.shadows
	c.m.mu.Unlock()
	if src == nil {
		return
	}
	for _, s := range src.ShadowStats() {
		ch <- prometheus.MustNewConstMetric(shadowRowsDesc, prometheus.CounterValue, float64(s.Rows), s.Projection, s.Candidate)
		ch <- prometheus.MustNewConstMetric(shadowDiffsDesc, prometheus.CounterValue, float64(s.Differences), s.Projection, s.Candidate)
		ch <- prometheus.MustNewConstMetric(shadowFailsDesc, prometheus.CounterValue, float64(s.Failures), s.Projection, s.Candidate)
	}
}
