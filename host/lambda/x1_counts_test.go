package lambda_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestX1_RedeliveredBatchCountsNoConflictsOrRetries redelivers a batch that
// begins its streams: each row is written without a read as a new one and
// found there already. That is no race (the host's Prometheus counters call
// it new_rows_existing), so the log line's conflicts and the metric line's
// Conflicts and Retries stay 0, as write_retries_total and conflicts_total do.
func TestX1_RedeliveredBatchCountsNoConflictsOrRetries(t *testing.T) {
	var logs, metrics bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: &metrics})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	f.mustInvoke(t, ev)
	f.mustInvoke(t, ev) // redelivered: every row is there already

	summaries, docs := invocationLines(t, &logs, &metrics)
	if len(summaries) != 2 || len(docs) != 2 {
		t.Fatalf("%d summaries and %d metric lines, want 2 of each:\n%s\n%s", len(summaries), len(docs), logs.String(), metrics.String())
	}
	if s := summaries[1]; s["conflicts"] != 0.0 || s["rowsFailed"] != 0.0 || s["alreadyApplied"] == 0.0 {
		t.Errorf("redelivered batch's summary = %v, want conflicts 0, rowsFailed 0 and the events already applied", s)
	}
	doc := docs[1]
	if doc["Conflicts"] != 0.0 || doc["Retries"] != 0.0 || doc["RowsFailed"] != 0.0 {
		t.Errorf("redelivered batch's metrics: Conflicts %v, Retries %v, RowsFailed %v; want 0, 0, 0", doc["Conflicts"], doc["Retries"], doc["RowsFailed"])
	}
}

// invocationLines parses the function's JSON log and metric output: the
// summary line of each invocation ("batch") and each embedded metric
// format line, in order.
func invocationLines(t *testing.T, logs, metrics *bytes.Buffer) (summaries, docs []map[string]any) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "batch" {
			summaries = append(summaries, m)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(metrics.String()), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("metric line is not JSON: %q", line)
		}
		docs = append(docs, doc)
	}
	return summaries, docs
}
