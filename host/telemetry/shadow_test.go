package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
)

type shadows []host.ShadowStats

func (s *shadows) ShadowStats() []host.ShadowStats { return *s }

// The shadow plugins' counters are read at each scrape: rows compared,
// rows that differed, failed batches, by projection and candidate; a
// promoted shadow (no longer listed) stops being reported.
func TestY2_MetricsReportTheShadowPluginsDifferences(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	_, ok := value(t, m, "dynafold_shadow_differences_total", nil)
	assert.False(t, ok, "nothing before a source is served")

	src := shadows{{Projection: "orders", Candidate: "order-summary@1.1.0", Rows: 40, Differences: 3, Failures: 1}}
	m.ServeShadows(&src)
	labels := map[string]string{"projection": "orders", "candidate": "order-summary@1.1.0"}
	for name, want := range map[string]float64{
		"dynafold_shadow_rows_total":        40,
		"dynafold_shadow_differences_total": 3,
		"dynafold_shadow_failures_total":    1,
	} {
		got, ok := value(t, m, name, labels)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}

	src[0].Differences = 5
	got, _ := value(t, m, "dynafold_shadow_differences_total", labels)
	assert.Equal(t, 5.0, got, "read at each scrape")

	src = nil // promoted
	_, ok = value(t, m, "dynafold_shadow_differences_total", labels)
	assert.False(t, ok)
}
