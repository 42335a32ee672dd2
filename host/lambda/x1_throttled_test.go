package lambda_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/dynafold/dynafold/ddblocal"
)

// TestX1_AnInvocationCountsTheRequestsDynamoDBThrottled: DynamoDB
// throttles two row writes of a batch once each; the client retries them
// and the batch succeeds. The invocation's summary line says
// throttledRequests 2 and its metric line ThrottledRequests 2, where only
// the Duration showed it; the next invocation, unthrottled, reports 0.
func TestX1_AnInvocationCountsTheRequestsDynamoDBThrottled(t *testing.T) {
	var logs, metrics bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: &metrics})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	f.env.Server.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
		{Op: "PutItem", Code: ddblocal.FaultThroughput}, {Op: "PutItem", Code: ddblocal.FaultThrottling}}})
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: the client retries a throttled write", ids)
	}
	f.mustInvoke(t, ev)

	summaries, docs := invocationLines(t, &logs, &metrics)
	if len(summaries) != 2 || len(docs) != 2 {
		t.Fatalf("%d summaries and %d metric lines, want 2 of each", len(summaries), len(docs))
	}
	if got := summaries[0]["throttledRequests"]; got != 2.0 {
		t.Errorf("summary throttledRequests = %v, want 2: %v", got, summaries[0])
	}
	if _, ok := summaries[1]["throttledRequests"]; ok {
		t.Errorf("the unthrottled invocation's summary names throttledRequests: %v", summaries[1])
	}
	for i, want := range []float64{2, 0} {
		if docs[i]["ThrottledRequests"] != want {
			t.Errorf("invocation %d: metric ThrottledRequests = %v, want %v", i+1, docs[i]["ThrottledRequests"], want)
		}
	}
}
