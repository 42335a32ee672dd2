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
	Plugins                          map[string]string // projection → name@version
}

// opsMetricUnits are the metrics of opsMetrics, in the order written.
var opsMetricUnits = []struct{ name, unit string }{{"Retries", "Count"}, {"GapReads", "Count"}, {"FailedRecords", "Count"}}

func opsOf(h *host.Host, res *host.Result, resp int) opsMetrics {
	m := opsMetrics{FailedRecords: resp, Plugins: map[string]string{}}
	if h == nil {
		return m
	}
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
// returns the metric definitions to declare.
func (m opsMetrics) add(doc map[string]any) []map[string]string {
	doc["Retries"], doc["GapReads"], doc["FailedRecords"] = m.Retries, m.GapReads, m.FailedRecords
	if len(m.Plugins) > 0 {
		doc["PluginVersions"] = m.Plugins
	}
	defs := make([]map[string]string, 0, len(opsMetricUnits))
	for _, mu := range opsMetricUnits {
		defs = append(defs, map[string]string{"Name": mu.name, "Unit": mu.unit})
	}
	return defs
}
