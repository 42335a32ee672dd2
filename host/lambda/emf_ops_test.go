package lambda_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestX1_EMFLineCarriesRetriesFailedRecordsAndPluginVersion parses the
// invocation's embedded-metric-format line: the retries, gap reads and
// failed records are declared metrics with numbers, and the plugin serving
// each projection is a property.
func TestX1_EMFLineCarriesRetriesFailedRecordsAndPluginVersion(t *testing.T) {
	var buf bytes.Buffer
	f := newFn(t, setup{metrics: &buf})
	ev := fixture(t, "failing_row.json")
	f.seed(t, ev)
	failed := f.mustInvoke(t, ev)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d metric lines, want one per invocation", len(lines))
	}
	var doc struct {
		AWS struct {
			CloudWatchMetrics []struct{ Metrics []struct{ Name, Unit string } }
		} `json:"_aws"`
		Records, Applied, RowsWritten, Retries, GapReads, FailedRecords *float64
		Duration                                                        *float64
		PluginVersions                                                  map[string]string
	}
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
		t.Fatalf("the metric line is not JSON: %v\n%s", err, lines[0])
	}
	declared := map[string]string{}
	for _, m := range doc.AWS.CloudWatchMetrics[0].Metrics {
		declared[m.Name] = m.Unit
	}
	for _, name := range []string{"Records", "Applied", "RowsWritten", "RowsFailed", "Retries", "GapReads", "FailedRecords", "Duration"} {
		if declared[name] == "" {
			t.Errorf("metric %s is not declared (%v)", name, declared)
		}
	}
	if doc.Retries == nil || *doc.Retries != 0 || doc.GapReads == nil || doc.FailedRecords == nil || doc.Duration == nil {
		t.Fatalf("missing values: %s", lines[0])
	}
	if *doc.FailedRecords != float64(len(failed)) || *doc.FailedRecords != 1 {
		t.Errorf("FailedRecords = %v, want the %d records reported failed", *doc.FailedRecords, len(failed))
	}
	if *doc.Records != 5 || *doc.Applied != 2 || *doc.RowsWritten != 1 {
		t.Errorf("Records, Applied, RowsWritten = %v, %v, %v; want 5, 2, 1", *doc.Records, *doc.Applied, *doc.RowsWritten)
	}
	if got := doc.PluginVersions["summaries"]; !strings.HasPrefix(got, "order-summary@") || len(got) <= len("order-summary@") {
		t.Errorf("PluginVersions = %v, want summaries: order-summary@<version>", doc.PluginVersions)
	}
}
