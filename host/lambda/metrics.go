package lambda

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host"
)

// MetricsNamespace is the CloudWatch namespace of the handler's metrics.
const MetricsNamespace = "dynafold"

// metricUnits lists the metrics of an invocation, in the order written.
var metricUnits = []struct{ name, unit string }{
	{"Records", "Count"}, {"Events", "Count"}, {"DecodeFailures", "Count"},
	{"Applied", "Count"}, {"AlreadyApplied", "Count"}, {"RowsWritten", "Count"}, {"RowsFailed", "Count"},
	{"Conflicts", "Count"}, {"BatchItemFailures", "Count"}, {"Duration", "Milliseconds"}, {"IteratorAge", "Milliseconds"},
	{"ThrottledRequests", "Count"},
	{"PluginSwaps", "Count"}, {"PluginSwapFailures", "Count"},
}

// emf writes each invocation's metrics as one CloudWatch embedded metric
// format line: CloudWatch Logs turns it into metrics of
// MetricsNamespace, dimension Source, with no API call from the function.
type emf struct {
	mu     sync.Mutex
	w      io.Writer
	shadow map[string]host.ShadowStats // the shadow counters the last line reported
}

func (m *emf) write(source string, s stats, ops opsMetrics, now time.Time) error {
	metrics := make([]map[string]string, 0, len(metricUnits))
	doc := map[string]any{
		"Source": source, "Records": s.Records, "Events": s.Events, "DecodeFailures": s.DecodeFailures,
		"Applied": s.Applied, "AlreadyApplied": s.AlreadyApplied, "RowsWritten": s.RowsWritten, "RowsFailed": s.RowsFailed,
		"Conflicts": s.Conflicts, "BatchItemFailures": s.BatchItemFailures, "Duration": s.DurationMs,
		"ThrottledRequests": s.Throttled,
	}
	if s.OldestRecordAgeMs >= 0 {
		doc["IteratorAge"] = s.OldestRecordAgeMs
	}
	if s.HotSwap {
		doc["PluginSwaps"], doc["PluginSwapFailures"] = s.PluginSwaps, s.PluginSwapFailures
	}
	for _, mu := range metricUnits {
		if _, ok := doc[mu.name]; ok {
			metrics = append(metrics, map[string]string{"Name": mu.name, "Unit": mu.unit})
		}
	}
	m.mu.Lock() // the shadow deltas and the line, in one order
	defer m.mu.Unlock()
	metrics = append(metrics, ops.add(doc, m.shadow)...)
	doc["_aws"] = map[string]any{
		"Timestamp": now.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace": MetricsNamespace, "Dimensions": [][]string{{"Source"}}, "Metrics": metrics,
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = m.w.Write(append(b, '\n'))
	return err
}
