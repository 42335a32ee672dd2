package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type byTenant struct {
	Tenant string `ddb:"tenant"`
	Order  string `ddb:"order"`
	Count  int64  `ddb:"count"`
}

// tenantProjection keys rows by the fields of a two-field stream id.
var tenantProjection = guest.Projection[byTenant]{
	Name: "by-tenant", Version: "1", Stream: "Order", Composite: []string{"tenantId", "orderId"},
	Key: func(_ string, e guest.Event) (guest.Key, bool) {
		f, err := e.StreamKey()
		if err != nil {
			return nil, false
		}
		return guest.StringKey("pk", "Tenant#"+f["tenantId"], "sk", "Order#"+f["orderId"]), true
	},
	Initial: func(_ string, e guest.Event) byTenant {
		f, _ := e.StreamKey()
		return byTenant{Tenant: f["tenantId"], Order: f["orderId"]}
	},
	Evolve: func(s byTenant, _ guest.Event) (byTenant, error) { s.Count++; return s, nil },
}

// TestES1_HostStructuredStreamIDs: an append whose multi-field id does not
// split is a validation error; the plugin's key and initial see the id's
// fields and key the row by them.
func TestES1_HostStructuredStreamIDs(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	table := env.Table(t, "orders", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"tenantId", "orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "by-tenant", Plugin: "native:t", Table: table, Checkpoint: host.CheckpointConfig{Field: "cp"}}},
	}
	p, err := guest.New(tenantProjection)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.WithNative("t", logic.Native(p, "by-tenant")), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })

	placed := host.NewEvent{Type: "Placed", Data: abi.Item{}}
	if _, err := h.Append(ctx, "Order", "acme#o#7", 0, placed); !errors.Is(err, host.ErrInvalidEvent) || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("an id whose value holds '#': %v, want ErrInvalidEvent", err)
	}
	if _, err := h.Append(ctx, "Order", "acme", 0, placed); !errors.Is(err, host.ErrInvalidEvent) {
		t.Fatalf("an id with one of two values: %v, want ErrInvalidEvent", err)
	}
	evs, err := h.Append(ctx, "Order", "acme#o-7", 0, placed, placed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.ProcessBatch(ctx, []host.Record{insertRecord(h, evs[0], 1), insertRecord(h, evs[1], 2)})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Projections["by-tenant"].Rows
	if len(rows) != 1 || rows[0].Err != nil {
		t.Fatalf("rows %+v", rows)
	}
	got := env.Get(t, table, abi.Item{"pk": abi.S("Tenant#acme"), "sk": abi.S("Order#o-7")})
	if got["tenant"].Str != "acme" || got["order"].Str != "o-7" || got["count"].Str != "2" {
		t.Errorf("row %v, want tenant acme, order o-7, count 2", got)
	}
	// An item in the table whose id does not split (written by another tool) fails to decode, naming streamId.
	bad := h.EventItem(abi.Event{Stream: "Order", StreamID: "acme#o#8", Version: 1, Type: "Placed", Data: abi.Item{}, Timestamp: evs[0].Timestamp})
	env.Put(t, cfg.EventStore.Table, bad)
	res, err = h.ProcessBatch(ctx, []host.Record{{EventName: "INSERT", DynamoDB: host.StreamRecord{NewImage: bad, SequenceNumber: "9"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DecodeFailures) != 1 || !strings.Contains(res.DecodeFailures[0].Err.Error(), `attribute "streamId"`) ||
		!strings.Contains(res.DecodeFailures[0].Err.Error(), "ambiguous") {
		t.Fatalf("decode failures %+v, want one naming streamId", res.DecodeFailures)
	}
}

// TestES1_HostRefusesAPluginWhoseCompositeDiffers: a plugin declaring its
// stream's composite fields (ABI 1.2) differently from the configuration
// is refused at load, naming both.
func TestES1_HostRefusesAPluginWhoseCompositeDiffers(t *testing.T) {
	env := testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: "e", Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId", "tenantId"}}}},
		Projections: []host.ProjectionConfig{{Name: "by-tenant", Plugin: "native:t", Table: "t", Checkpoint: host.CheckpointConfig{Field: "cp"}}},
	}
	p, err := guest.New(tenantProjection)
	if err != nil {
		t.Fatal(err)
	}
	_, err = host.New(context.Background(), cfg, host.WithNative("t", logic.Native(p, "by-tenant")), host.WithClient(env.Client))
	if err == nil || !strings.Contains(err.Error(), `["tenantId" "orderId"]`) || !strings.Contains(err.Error(), `["orderId" "tenantId"]`) {
		t.Fatalf("New: %v, want a refusal naming both composites", err)
	}
	undeclared := tenantProjection
	undeclared.Composite = nil
	if p, err = guest.New(undeclared); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.WithNative("t", logic.Native(p, "by-tenant")), host.WithClient(env.Client))
	if err != nil {
		t.Fatalf("a plugin that declares nothing (ABI 1.0/1.1) loads: %v", err)
	}
	h.Close(context.Background())
}
