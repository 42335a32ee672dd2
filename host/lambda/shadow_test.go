package lambda_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// TestY2_ShadowRunsInTheLambdaHandler configures a shadow plugin that
// differs from the live one for the customer c-2 only: the handler's
// invocation writes the live rows, and the shadow counts and logs o-2. The
// invocation's metric line carries the rows compared and the one
// difference, with the candidate; the next invocation's line carries only
// what that invocation added.
func TestY2_ShadowRunsInTheLambdaHandler(t *testing.T) {
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "summaries", false)
	live, err := guest.New(ordersummary.Projection)
	if err != nil {
		t.Fatal(err)
	}
	cp := ordersummary.Projection
	cp.Version = "1.1.0"
	base := cp.Evolve
	cp.Evolve = func(s ordersummary.OrderSummary, e guest.Event) (ordersummary.OrderSummary, error) {
		s, err := base(s, e)
		if err == nil && e.Type == "OrderPlaced" && s.Customer == "c-2" {
			s.Status = "placed-vip"
		}
		return s, err
	}
	cand, err := guest.New(cp)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: events, Schema: "shop", SchemaVersion: 1, Streams: []host.StreamConfig{
			{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: "native:live", Table: rows,
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}, Shadow: &host.ShadowConfig{Plugin: "native:candidate"}}},
	}
	logs, metrics := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h, call, err := lambda.Build(context.Background(), cfg, []host.Option{host.WithClient(env.Client),
		host.WithNative("live", logic.Native(live, "order-summary")), host.WithNative("candidate", logic.Native(cand, "order-summary")),
		host.WithLogger(log)}, lambda.WithLogger(log), lambda.WithMetrics(metrics))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	payload := testenv.LambdaFixture(t, "stream_event.json")
	env.SeedEvents(t, events, payload)
	resp, err := call(context.Background(), payload)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("invoke: %v %+v", err, resp)
	}
	for _, id := range []string{"o-1", "o-2", "o-3"} {
		it := env.Get(t, rows, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
		if strings.HasSuffix(it["status"].Str, "-vip") {
			t.Errorf("row %s was written by the shadow: %v", id, it)
		}
	}
	st := h.ShadowStats()
	if len(st) != 1 || st[0].Rows != 3 || st[0].Differences != 1 {
		t.Fatalf("shadow stats %+v", st)
	}
	if out := logs.String(); strings.Count(out, "shadow plugin differs") != 1 || !strings.Contains(out, "OrderSummary#o-2") {
		t.Fatalf("log:\n%s", out)
	}
	m := lastEMF(t, metrics.String())
	if m["ShadowRows"] != 3.0 || m["ShadowDifferences"] != 1.0 || m["ShadowFailures"] != 0.0 {
		t.Errorf("metric line: ShadowRows %v ShadowDifferences %v ShadowFailures %v, want 3 1 0", m["ShadowRows"], m["ShadowDifferences"], m["ShadowFailures"])
	}
	if c, _ := m["ShadowPlugins"].(map[string]any); c["summaries"] != "order-summary@1.1.0" {
		t.Errorf("metric line: ShadowPlugins %v", m["ShadowPlugins"])
	}
	if !declares(m, "ShadowDifferences") {
		t.Errorf("ShadowDifferences is not declared as a metric: %v", m["_aws"])
	}

	// The same batch again: the line reports what this invocation added.
	if resp, err := call(context.Background(), payload); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("second invoke: %v %+v", err, resp)
	}
	after := h.ShadowStats()[0]
	m = lastEMF(t, metrics.String())
	if m["ShadowRows"] != float64(after.Rows-3) || m["ShadowDifferences"] != float64(after.Differences-1) {
		t.Errorf("second line: ShadowRows %v ShadowDifferences %v, want %d %d (counters now %+v)",
			m["ShadowRows"], m["ShadowDifferences"], after.Rows-3, after.Differences-1, after)
	}
}

// lastEMF returns the values of the last embedded-metric line in out.
func lastEMF(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("metric line %q: %v", lines[len(lines)-1], err)
	}
	return m
}

// declares reports whether the EMF document m declares the metric name.
func declares(m map[string]any, name string) bool {
	aws, _ := m["_aws"].(map[string]any)
	cms, _ := aws["CloudWatchMetrics"].([]any)
	for _, cm := range cms {
		ms, _ := cm.(map[string]any)["Metrics"].([]any)
		for _, d := range ms {
			if d.(map[string]any)["Name"] == name {
				return true
			}
		}
	}
	return false
}
