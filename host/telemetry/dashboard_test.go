package telemetry_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

// exprs returns every "expr" and templating "query" string of a Grafana
// dashboard, wherever it is nested.
func exprs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
				*out = append(*out, s)
			}
			exprs(x, out)
		}
	case []any:
		for _, x := range v {
			exprs(x, out)
		}
	}
}

// TestX1_GrafanaDashboardQueriesOnlyRegisteredMetrics parses the shipped
// dashboard and checks that every dynafold metric its queries name is one
// the registry serves (histograms by their _bucket, _sum and _count
// series), and that it shows the main ones.
func TestX1_GrafanaDashboardQueriesOnlyRegisteredMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../docs/deploy/grafana-dashboard.json")
	require.NoError(t, err)
	var dash map[string]any
	require.NoError(t, json.Unmarshal(raw, &dash), "the dashboard is valid JSON")
	require.NotEmpty(t, dash["panels"])

	// Every series exists once each observer method has been called.
	m := telemetry.New(telemetry.Options{})
	m.ShardRead("s", "sh", 1, time.Second)
	f := opstest.Start(t, "")
	res, err := f.Host.ProcessBatch(context.Background(), f.Append(t, "a", 0, opstest.Add(1)))
	require.NoError(t, err)
	m.BatchProcessed("s", "sh", res, time.Millisecond, nil)
	m.BatchProcessed("s", "sh", nil, time.Millisecond, assert.AnError)
	m.LeasesHeld("w", "s", []string{"sh"}, 1)
	m.RecordGivenUp("p", "s", "sh", host.Record{}, "x")
	m.PluginCall("p", "evolve", time.Millisecond, assert.AnError)
	m.ServePlugins(fakePlugins{})
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	served := map[string]bool{}
	for _, f := range fams {
		served[f.GetName()] = true
	}

	var qs []string
	exprs(dash, &qs)
	require.NotEmpty(t, qs)
	name := regexp.MustCompile(`dynafold_[a-z_]+`)
	used := map[string]bool{}
	for _, q := range qs {
		for _, n := range name.FindAllString(q, -1) {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(n, suffix); ok && served[b] {
					base = b
				}
			}
			used[base] = true
			assert.True(t, served[base], "the dashboard queries %s, which the registry does not serve (query %q)", n, q)
		}
	}
	for _, must := range []string{"dynafold_shard_lag_seconds", "dynafold_shard_iterator_age_seconds", "dynafold_records_read_total",
		"dynafold_events_applied_total", "dynafold_rows_written_total", "dynafold_rows_failed_total", "dynafold_records_failed_total",
		"dynafold_write_retries_total", "dynafold_gap_reads_total", "dynafold_conflicts_total", "dynafold_records_given_up_total",
		"dynafold_leases_held", "dynafold_shards", "dynafold_plugin_call_duration_seconds", "dynafold_plugin_info"} {
		assert.True(t, used[must], "the dashboard shows %s", must)
	}
}

type fakePlugins struct{}

func (fakePlugins) Projections() []string                        { return []string{"p"} }
func (fakePlugins) PluginVersion(string) (string, string, error) { return "ledger", "1.0.0", nil }
