package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/internal/syncbuf"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// candidateHost starts a host whose "summaries" projection serves
// order-summary 1.0.0 through hotSwap; extra is added to the projection's
// JSON (e.g. a shadow). The candidate order-summary 1.1.0, which differs
// only for the customer "vip", is written as vip.wasm beside the
// configuration.
func candidateHost(t *testing.T, extra string) (*host.Host, *testenv.Env, string, *syncbuf.Buffer) {
	t.Helper()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "rows", false)
	dir, _ := swapModules(t)
	vip, err := os.ReadFile(wasmbuild.BuildPath(t, "testdata/ordervip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vip.wasm"), vip, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dynafold.json")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"},
                   "writtenBy": "writtenBy", "hotSwap": {}%s}]
}`, events, rows, extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	h, err := host.New(context.Background(), cfg, host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, env, rows, logs
}

// placeOrders appends an OrderPlaced and an ItemAdded to each order (id →
// customer) and returns the orders' records as the change feed delivers them.
func placeOrders(t *testing.T, h *host.Host, customers map[string]string) []host.Record {
	t.Helper()
	ctx := context.Background()
	var recs []host.Record
	for id, c := range customers {
		if _, err := h.Append(ctx, "Order", id, 0,
			host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(c)}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("2.5")}}); err != nil {
			t.Fatal(err)
		}
		r, err := h.Capture(ctx, host.CaptureOptions{Stream: "Order", StreamID: id})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r...)
	}
	return recs
}

func orderRow(t *testing.T, env *testenv.Env, rows, id string) abi.Item {
	t.Helper()
	return env.Get(t, rows, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
}

// TestY2_ShadowCountsTheDifferingRowAndPromoteMakesItServe runs the
// candidate beside the live plugin: the rows stay the live plugin's, the
// one row where the candidate differs is counted and logged with its key,
// and Promote makes the candidate serve the next batch.
func TestY2_ShadowCountsTheDifferingRowAndPromoteMakesItServe(t *testing.T) {
	ctx := context.Background()
	h, env, rows, logs := candidateHost(t, `, "shadow": {"plugin": "vip.wasm"}`)
	res, err := h.ProcessBatch(ctx, placeOrders(t, h, map[string]string{"o-1": "ann", "o-2": "vip", "o-3": "bo"}))
	if err != nil || len(res.Failed()) != 0 {
		t.Fatalf("batch: %v %v", err, res.Failed())
	}
	for _, id := range []string{"o-1", "o-2", "o-3"} {
		it := orderRow(t, env, rows, id)
		if it["status"].Str != "placed" || it["writtenBy"].Str != "order-summary@1.0.0" || it["total"].Str != "2.5" {
			t.Errorf("row %s is not the live plugin's: %v", id, it)
		}
	}
	st := h.ShadowStats()
	if len(st) != 1 || st[0].Candidate != "order-summary@1.1.0" || st[0].Rows != 3 || st[0].Differences != 1 || st[0].Batches != 1 {
		t.Fatalf("shadow stats: %+v", st)
	}
	var diffLines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "shadow plugin differs") {
			diffLines = append(diffLines, l)
		}
	}
	if len(diffLines) != 1 || !strings.Contains(diffLines[0], "pk=OrderSummary#o-2,sk=OrderSummary") ||
		!strings.Contains(diffLines[0], `status: {\"S\":\"placed\"} → {\"S\":\"placed-vip\"}`) {
		t.Fatalf("difference log: %q", diffLines)
	}

	info, err := h.Promote(ctx, "summaries")
	if err != nil || info.Plugin != "order-summary@1.1.0" {
		t.Fatalf("promote: %+v %v", info, err)
	}
	if _, v, _ := h.PluginVersion("summaries"); v != "1.1.0" {
		t.Fatalf("serving %s after promote", v)
	}
	if len(h.ShadowStats()) != 0 {
		t.Errorf("the shadow still runs after its promotion: %+v", h.ShadowStats())
	}
	if _, err := h.ProcessBatch(ctx, placeOrders(t, h, map[string]string{"o-4": "vip"})); err != nil {
		t.Fatal(err)
	}
	if it := orderRow(t, env, rows, "o-4"); it["status"].Str != "placed-vip" || it["writtenBy"].Str != "order-summary@1.1.0" {
		t.Fatalf("after promote the candidate serves: %v", it)
	}
	if _, err := h.Promote(ctx, "summaries"); !errors.Is(err, host.ErrNoShadow) {
		t.Errorf("a second promote: %v", err)
	}
}

// A redelivered first event of a row that has more: the live engine finds
// it applied and keeps the row; the shadow must find the same row (it reads
// it first, its store not checking a new row's condition), not fold the
// event from initial and count a difference.
func TestY2_ShadowOfARedeliveredFirstEventSeesTheRow(t *testing.T) {
	ctx := context.Background()
	h, _, _, _ := candidateHost(t, `, "shadow": {"plugin": "vip.wasm"}`)
	recs := placeOrders(t, h, map[string]string{"o-1": "ann"})
	require.Len(t, recs, 2)
	res, err := h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	require.Empty(t, res.Failed())

	res, err = h.ProcessBatch(ctx, recs[:1]) // OrderPlaced again
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	row := res.Projections["summaries"].Rows[0]
	assert.False(t, row.Written)
	assert.Equal(t, "1", row.State["items"].Str, "the live row as read")
	st := h.ShadowStats()
	require.Len(t, st, 1)
	assert.Zero(t, st[0].Differences, "the shadow saw the same row")
}

// TestY2_ShadowConfigIsValidated refuses a shadow without a plugin and one
// naming the live plugin itself.
func TestY2_ShadowConfigIsValidated(t *testing.T) {
	for shadow, want := range map[string]string{
		`{}`:                        `projection "p".shadow.plugin is required`,
		`{"plugin": "orders.wasm"}`: `is the live plugin itself`,
	} {
		_, err := host.ParseConfig([]byte(`{"eventStore": {"table": "e", "schema": "s", "schemaVersion": 1, "streams": [{"name": "Order"}]},
  "projections": [{"name": "p", "plugin": "orders.wasm", "table": "t", "checkpoint": {"field": "version"}, "shadow": ` + shadow + `}]}`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("shadow %s: %v, want %q", shadow, err, want)
		}
	}
}
