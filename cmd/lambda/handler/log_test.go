package handler_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
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
