package lambda

import (
	"github.com/dynafold/dynafold/host"
)

// opsMetrics are the metrics an invocation adds to the embedded metric
// format line beside stats, under the names the Prometheus metrics of a
// long-running host use (docs/operations.md): retries, gap reads, the
// failed records, and the plugin serving each projection (a property, not
// a dimension, so each metric stays one series per source).
type opsMetrics struct {
	Retries, GapReads, FailedRecords int
	Plugins                          map[string]string  // projection → name@version
	Shadows                          []host.ShadowStats // counters since the host started
}

// opsMetricUnits are the metrics of opsMetrics, in the order written.
var opsMetricUnits = []struct{ name, unit string }{{"Retries", "Count"}, {"GapReads", "Count"}, {"FailedRecords", "Count"}}

func opsOf(h *host.Host, res *host.Result, resp int) opsMetrics {
	m := opsMetrics{FailedRecords: resp, Plugins: map[string]string{}}
	if h == nil {
		return m
	}
	m.Shadows = h.ShadowStats()
	for _, p := range h.Projections() {
		if name, v, err := h.PluginVersion(p); err == nil {
			m.Plugins[p] = name + "@" + v
		}
		if res != nil {
			c := res.Counts(p)
			m.Retries += c.Retries
			m.GapReads += c.GapReads
		}
	}
	return m
}

// add puts the metrics and the plugin versions into an EMF document and
// returns the metric definitions to declare. With shadow plugins it adds
// what they did since the previous line (seen holds the counters that line
// reported, per projection and candidate; add updates it): ShadowRows,
// ShadowDifferences and ShadowFailures, and the candidates as the property
// ShadowPlugins.
func (m opsMetrics) add(doc map[string]any, seen map[string]host.ShadowStats) []map[string]string {
	doc["Retries"], doc["GapReads"], doc["FailedRecords"] = m.Retries, m.GapReads, m.FailedRecords
	if len(m.Plugins) > 0 {
		doc["PluginVersions"] = m.Plugins
	}
	defs := make([]map[string]string, 0, len(opsMetricUnits)+3)
	for _, mu := range opsMetricUnits {
		defs = append(defs, map[string]string{"Name": mu.name, "Unit": mu.unit})
	}
	if len(m.Shadows) == 0 {
		return defs
	}
	var rows, diffs, fails uint64
	candidates := map[string]string{}
	for _, s := range m.Shadows {
		k := s.Projection + "\x00" + s.Candidate
		last := seen[k] // zero for a candidate not seen before
		rows += s.Rows - min(last.Rows, s.Rows)
		diffs += s.Differences - min(last.Differences, s.Differences)
		fails += s.Failures - min(last.Failures, s.Failures)
		seen[k] = s
		candidates[s.Projection] = s.Candidate
	}
	doc["ShadowRows"], doc["ShadowDifferences"], doc["ShadowFailures"] = rows, diffs, fails
	doc["ShadowPlugins"] = candidates
	for _, name := range []string{"ShadowRows", "ShadowDifferences", "ShadowFailures"} {
		defs = append(defs, map[string]string{"Name": name, "Unit": "Count"})
	}
	return defs
}
