package lambda_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// fn is a handler over a host on an in-process ddblocal, reached through
// the real SDK client.
type fn struct {
	env    *testenv.Env
	events string // the event table
	rows   string // the order-summary table
	call   lambda.Func
}

type setup struct {
	source          string
	plugin          string // "" runs the order-summary logic natively
	onDecodeFailure string
	log             *slog.Logger // nil: slog.Default()
	metrics         io.Writer    // nil: no metrics
	freshness       host.FreshnessConfig
	clock           func() time.Time // nil: the wall clock
}

func newFn(t testing.TB, s setup) *fn {
	t.Helper()
	env := testenv.Start(t)
	f := &fn{env: env, events: env.Table(t, "events", true), rows: env.Table(t, "summaries", false)}
	cfg := &host.Config{
		Source: host.Source(s.source), OnDecodeFailure: host.DecodeFailurePolicy(s.onDecodeFailure),
		EventStore: host.EventStoreConfig{Table: f.events, Schema: "shop", SchemaVersion: 1, Streams: []host.StreamConfig{
			{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: s.plugin, Table: f.rows,
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}, Freshness: s.freshness}},
	}
	opts := []host.Option{host.WithClient(env.Client)}
	if s.clock != nil {
		opts = append(opts, host.WithClock(s.clock))
	}
	if s.plugin == "" {
		p, err := guest.New(ordersummary.Projection)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Projections[0].Plugin = "native:order-summary"
		opts = append(opts, host.WithNative("order-summary", logic.Native(p, "order-summary")))
	}
	h, call, err := lambda.Build(context.Background(), cfg, opts, lambda.WithLogger(s.log), lambda.WithMetrics(s.metrics))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	f.call = call
	return f
}

// fixture reads a captured batch from testdata.
func fixture(t *testing.T, name string) json.RawMessage { return testenv.LambdaFixture(t, name) }

// seed writes the batch's event items into the event table.
func (f *fn) seed(t *testing.T, payload json.RawMessage) { f.env.SeedEvents(t, f.events, payload) }

func (f *fn) invoke(t *testing.T, payload json.RawMessage) (events.DynamoDBEventResponse, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.call(ctx, payload)
}

// mustInvoke invokes the handler and returns the failed identifiers.
func (f *fn) mustInvoke(t *testing.T, payload json.RawMessage) []string {
	t.Helper()
	resp, err := f.invoke(t, payload)
	if err != nil {
		t.Fatalf("invocation failed: %v", err)
	}
	return itemIDs(resp)
}

func itemIDs(resp events.DynamoDBEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// row reads an order's summary row (nil when absent).
func (f *fn) row(t *testing.T, orderID string) abi.Item {
	t.Helper()
	it, err := dynamo.New(f.env.Client).GetItem(context.Background(), f.rows, ordersummary.RowKey(orderID))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// summary is the part of a row the tests check.
type summary struct {
	status  string
	items   string
	total   string
	version string
}

func (f *fn) wantRow(t *testing.T, orderID string, want summary) {
	t.Helper()
	it := f.row(t, orderID)
	if it == nil {
		t.Fatalf("row %s: absent, want %+v", orderID, want)
	}
	got := summary{status: it["status"].Str, items: it["items"].Str, total: it["total"].Str, version: it["version"].Str}
	if got != want {
		t.Errorf("row %s = %+v, want %+v", orderID, got, want)
	}
}

func (f *fn) wantNoRow(t *testing.T, orderID string) {
	t.Helper()
	if it := f.row(t, orderID); it != nil {
		t.Errorf("row %s exists (%v), want none", orderID, it)
	}
}

// records returns a fixture's records, raw, and identifiers by position.
func records(t *testing.T, payload json.RawMessage) (raws []json.RawMessage, seq, eventID []string) {
	return testenv.RecordIDs(t, payload)
}

// streamEvent wraps records as Lambda delivers them.
func streamEvent(t testing.TB, raws ...json.RawMessage) json.RawMessage {
	t.Helper()
	if raws == nil {
		raws = []json.RawMessage{}
	}
	b, err := json.Marshal(map[string]any{"Records": raws})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
