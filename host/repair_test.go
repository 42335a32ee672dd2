package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestM8_HostRebuildRowAndCatchUpRow: a row is re-derived from named
// instances, and caught up with events that were never delivered.
func TestM8_HostRebuildRowAndCatchUpRow(t *testing.T) {
	ctx := context.Background()
	h := ledgerHost(t, host.CheckpointConfig{Field: "version", InstanceField: "owner", Map: "checkpoints"}, &host.RevisionConfig{Field: "rev"})
	b, a := appendAdd(t, h, "b", "10"), appendAdd(t, h, "a", "1")
	if _, err := h.ApplyEvents(ctx, "ledger", b); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ApplyEvents(ctx, "ledger", a); err != nil {
		t.Fatal(err)
	}
	key := testlogic.RowKey("x")

	o, err := h.RebuildRow(ctx, "ledger", key, host.InstanceRef{Source: testlogic.Stream, StreamID: "a"}, host.InstanceRef{Source: testlogic.Stream, StreamID: "b"})
	if err != nil || !o.Written {
		t.Fatalf("RebuildRow: %v written=%v", err, o.Written)
	}
	row, _, _ := h.Row(ctx, "ledger", key)
	if row["owner"].Str != "a" || row["total"].Str != "11" || row["checkpoints"].Map["Acct#b"].Str != "1" {
		t.Errorf("rebuilt row %v: want owner a, total 11, Acct#b at 1", row)
	}

	// never delivered
	if _, err := h.Append(ctx, testlogic.Stream, "b", 1, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("20"), "row": abi.S("x")}}); err != nil {
		t.Fatal(err)
	}
	o, err = h.CatchUpRow(ctx, "ledger", key)
	if err != nil || !o.Written {
		t.Fatalf("CatchUpRow: %v written=%v", err, o.Written)
	}
	row, _, _ = h.Row(ctx, "ledger", key)
	if row["total"].Str != "31" || row["checkpoints"].Map["Acct#b"].Str != "2" {
		t.Errorf("caught-up row %v: want total 31, Acct#b at 2", row)
	}

	if _, err := h.CatchUpRow(ctx, "ledger", testlogic.RowKey("none")); !errors.Is(err, host.ErrNoInstances) {
		t.Errorf("CatchUpRow of a row without checkpoints: %v, want ErrNoInstances", err)
	}
}

// TestM8_WithSourcesOfFindsTheInstances: RebuildRow without instances asks
// the configured finder.
func TestM8_WithSourcesOfFindsTheInstances(t *testing.T) {
	ctx := context.Background()
	called := false
	h := ledgerHostWith(t, host.CheckpointConfig{Map: "checkpoints"}, &host.RevisionConfig{Field: "rev"},
		host.WithSourcesOf("ledger", func(_ context.Context, key abi.Item) ([]host.InstanceRef, error) {
			called = true
			return []host.InstanceRef{{Source: testlogic.Stream, StreamID: "s9"}}, nil
		}))
	appendAdd(t, h, "s9", "9")
	if _, err := h.RebuildRow(ctx, "ledger", testlogic.RowKey("x")); err != nil || !called {
		t.Fatalf("RebuildRow: %v (finder called: %v)", err, called)
	}
	row, ok, _ := h.Row(ctx, "ledger", testlogic.RowKey("x"))
	if !ok || row["total"].Str != "9" {
		t.Errorf("row %v, want total 9 from s9", row)
	}
}

func TestM8_ParseInstanceRef(t *testing.T) {
	r, err := host.ParseInstanceRef("weigh#w-1#2")
	if err != nil || r.Source != "weigh" || r.StreamID != "w-1#2" || r.String() != "weigh#w-1#2" {
		t.Errorf("ParseInstanceRef: %+v %v", r, err)
	}
	for _, bad := range []string{"weigh", "#w", "weigh#"} {
		if _, err := host.ParseInstanceRef(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
