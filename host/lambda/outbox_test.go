package lambda_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// The handler delivers the effects of each written row to the webhook the
// configuration names, right after the write, and logs the counts.
func TestO3_LambdaHandlerDeliversToTheConfiguredTarget(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		posts++
		mu.Unlock()
	}))
	defer srv.Close()
	call, logs := outboxFunction(t, srv.URL)

	resp, err := call()
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("invoke: %v, %v", resp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if posts != 7 { // one effect per applied event of the batch: o-1 v1–4, o-2 v1–2, o-3 v1
		t.Errorf("webhook got %d effects, want 7", posts)
	}
	if !strings.Contains(logs.String(), "effectsEnqueued=7 effectsDelivered=7 effectsUndelivered=0") {
		t.Errorf("the batch log line lacks the effect counts: %s", logs.String())
	}
}

// An effect the webhook does not take is left pending; no `host run`
// sweeps a function's outbox, so the warning names a scheduled `host
// drain-pending` as what delivers it, not `host run`'s sweep.
func TestO3_LambdaUndeliveredEffectNamesAScheduledDrainPending(t *testing.T) {
	down := httptest.NewServer(nil)
	url := down.URL
	down.Close() // nothing listens there
	call, logs := outboxFunction(t, url)

	if resp, err := call(); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("invoke: %v, %v", resp, err)
	}
	out := logs.String()
	if !strings.Contains(out, "outbox effect not delivered") || !strings.Contains(out, "`host drain-pending` run on a schedule") {
		t.Errorf("the warning does not name a scheduled `host drain-pending`:\n%s", out)
	}
	if strings.Contains(out, "`host run` sweeps it") {
		t.Errorf("the warning names `host run`'s sweep, which a Lambda function does not have:\n%s", out)
	}
}

// outboxFunction builds the Lambda function of the order-summary projection
// with one effect per event and an outbox delivering to the webhook url,
// seeds the stream_event fixture's events, and returns a call of the
// function with that batch and the function's log.
func outboxFunction(t *testing.T, url string) (call func() (events.DynamoDBEventResponse, error), logs *bytes.Buffer) {
	t.Helper()
	env := testenv.Start(t)
	eventTable, rows := env.Table(t, "events", true), env.Table(t, "summaries", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: eventTable, Schema: "shop", SchemaVersion: 1, Streams: []host.StreamConfig{
			{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: "native:order-summary", Table: rows,
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}, Revision: &host.RevisionConfig{Field: "rev"},
			Outbox: &host.OutboxConfig{Deliver: &host.DeliverConfig{Webhook: &host.WebhookConfig{URL: url}}}}},
	}
	p, err := guest.New(ordersummary.Projection)
	if err != nil {
		t.Fatal(err)
	}
	logs = &bytes.Buffer{}
	h, fn, err := lambda.Build(context.Background(), cfg, []host.Option{host.WithClient(env.Client),
		host.WithNative("order-summary", testlogic.WithEffects(logic.Native(p, "order-summary"), 1))},
		lambda.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	ev := testenv.LambdaFixture(t, "stream_event.json")
	env.SeedEvents(t, eventTable, ev)
	return func() (events.DynamoDBEventResponse, error) { return fn(context.Background(), ev) }, logs
}
