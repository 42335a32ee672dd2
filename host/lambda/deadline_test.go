package lambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/lambda"
)

// TestH1_RowStoppedAtTheDeadlineMarginSaysTheTimeRanOut slows the table
// down so the rows are still reading when the invocation reaches its
// deadline margin: each failed row's log line says the function's time ran
// out before its timeout, that the records go back to the source and what
// to raise, with the SDK call's deadline error still in it.
func TestH1_RowStoppedAtTheDeadlineMarginSaysTheTimeRanOut(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	f.env.Server.SetFaults(ddblocal.FaultConfig{Latency: 400 * time.Millisecond})
	defer f.env.Server.SetFaults(ddblocal.FaultConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), lambda.DefaultDeadlineMargin+100*time.Millisecond)
	defer cancel()
	resp, err := f.call(ctx, ev)
	if err != nil {
		t.Fatalf("invocation failed: %v", err)
	}
	if len(resp.BatchItemFailures) == 0 {
		t.Fatalf("no record reported failed; logs:\n%s", logs.String())
	}
	failed := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] != "row failed" && m["msg"] != "key failed" {
			continue
		}
		failed++
		msg, _ := m["err"].(string)
		for _, want := range []string{"the function's time ran out", "500 ms before its timeout", "go back to the source",
			"raise the function's timeout or lower the batch size", "BatchSize", "context deadline exceeded"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: err lacks %q: %s", m["msg"], want, msg)
			}
		}
	}
	if failed == 0 {
		t.Fatalf("no failed row logged:\n%s", logs.String())
	}
}
