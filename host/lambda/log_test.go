package lambda_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/lambda"
)

// TestX2_InvocationLogsAreJSON checks the per-invocation log: one JSON
// summary line, and one line per failure naming the record.
func TestX2_InvocationLogsAreJSON(t *testing.T) {
	var buf bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&buf, nil))})
	ev := fixture(t, "failing_row.json")
	f.seed(t, ev)
	f.mustInvoke(t, ev)

	var summary, rowFailed map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		switch m["msg"] {
		case "batch":
			summary = m
		case "row failed":
			rowFailed = m
		}
	}
	if summary == nil || summary["records"] != 5.0 || summary["rowsFailed"] != 1.0 || summary["batchItemFailures"] != 1.0 ||
		summary["source"] != "lambda" || summary["oldestRecordAgeMs"] == nil {
		t.Errorf("summary = %v, want 5 records, 1 failed row, 1 batch item failure, source and record age", summary)
	}
	if rowFailed == nil || !strings.Contains(rowFailed["key"].(string), "OrderSummary#o-5") ||
		!strings.Contains(rowFailed["err"].(string), "evolve failed") {
		t.Errorf("row failed = %v, want o-5's key and the evolve error", rowFailed)
	}
	if got, _ := json.Marshal(rowFailed["positions"]); string(got) != "[0,3,4]" {
		t.Errorf("row failed positions = %s, want [0,3,4] (o-5's records)", got)
	}
}

// TestX1_MetricsInEmbeddedMetricFormat checks the per-invocation metrics
// line CloudWatch Logs extracts metrics from.
func TestX1_MetricsInEmbeddedMetricFormat(t *testing.T) {
	var buf bytes.Buffer
	f := newFn(t, setup{metrics: &buf})
	ev := fixture(t, "failing_row.json")
	f.seed(t, ev)
	f.mustInvoke(t, ev)
	f.mustInvoke(t, ev) // redelivered: o-10's events are already applied

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d metric lines, want one per invocation:\n%s", len(lines), buf.String())
	}
	var doc struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Source string
	}
	for i, line := range lines {
		var values map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil || json.Unmarshal([]byte(line), &values) != nil {
			t.Fatalf("metric line %d is not JSON: %v", i, err)
		}
		if doc.AWS.Timestamp == 0 || len(doc.AWS.CloudWatchMetrics) != 1 || doc.Source != "lambda" {
			t.Fatalf("metric line %d: %s", i, line)
		}
		d := doc.AWS.CloudWatchMetrics[0]
		if d.Namespace != lambda.MetricsNamespace || len(d.Dimensions) != 1 || d.Dimensions[0][0] != "Source" || len(d.Metrics) < 10 {
			t.Errorf("metric line %d directive = %+v", i, d)
		}
		for _, m := range d.Metrics {
			if _, ok := values[m.Name].(float64); !ok {
				t.Errorf("metric line %d: metric %s has no numeric value", i, m.Name)
			}
		}
		want := map[string]float64{"Records": 5, "RowsFailed": 1, "BatchItemFailures": 1, "Applied": 2, "AlreadyApplied": 0, "RowsWritten": 1}
		if i == 1 {
			want["Applied"], want["AlreadyApplied"], want["RowsWritten"] = 0, 2, 0
		}
		for k, v := range want {
			if values[k] != v {
				t.Errorf("metric line %d: %s = %v, want %v", i, k, values[k], v)
			}
		}
	}
}
