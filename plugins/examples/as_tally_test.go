//go:build !wasip1

package examples_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism/asbuild"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/internal/testenv"
)

// tallyWasm builds the AssemblyScript test plugin as-tally (the helper
// layer's multi-source context, removeRow and effects) and returns its path.
func tallyWasm(t *testing.T) string {
	t.Helper()
	proj := filepath.Join("order-summary-as")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := asbuild.BuildFile(ctx, asbuild.Project{Dir: proj}, asbuild.Module{
		Entry: "assembly/examples/tally.ts", SourceDir: filepath.Join(proj, "assembly"),
		Args: []string{"--config", "assembly/examples/asconfig.json", "--target", "release"},
	})
	if err != nil {
		if errors.Is(err, asbuild.ErrNoNode) {
			t.Skipf("skipping: %v", err)
		}
		t.Fatal(err)
	}
	return path
}

func tallyEvent(stream, id string, v uint64, typ string) abi.Event {
	return abi.Event{Stream: stream, StreamID: id, Version: v, Type: typ, Data: abi.Item{"_tag": abi.S(typ)},
		Timestamp: "2026-12-01T00:00:00.000Z"}
}

// TestM1_AssemblyScriptEffectsAndRemoveRowReachTheHost: through the host's
// Extism transport, an AssemblyScript plugin's evolve sees each event's
// source and stream id, returns effects in its decisions and removes the
// row.
func TestM1_AssemblyScriptEffectsAndRemoveRowReachTheHost(t *testing.T) {
	checkTallyEffects(t, tallyWasm(t))
}

// checkTallyEffects runs the checks of TestM1_… on the tally plugin at
// path (AssemblyScript on Extism, or Rust or C on the raw ABI).
func checkTallyEffects(t *testing.T, path string) {
	ctx := context.Background()
	p, _, err := transport.LoadFile(ctx, path, plugin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if d := p.Describe(); len(d.Sources) != 2 || d.Sources[1].Name != "b" || d.Sources[1].Stream != "Beta" {
		t.Fatalf("describe %+v", d)
	}
	key := abi.Item{"pk": abi.S("Tally"), "sk": abi.S("T")}
	resp, err := p.Evolve(ctx, &abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{
		{Source: "a", Event: tallyEvent("Alpha", "x1", 1, "Ping")},
		{Source: "b", Event: tallyEvent("Beta", "y7", 4, "Ping")},
		{Source: "b", Event: tallyEvent("Beta", "y7", 5, "Close")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Decisions) != 3 {
		t.Fatalf("decisions %+v", resp.Decisions)
	}
	want := []abi.Value{
		abi.M(abi.Item{"from": abi.S("a#x1"), "kind": abi.S("ping"), "v": abi.N("1")}),
		abi.M(abi.Item{"from": abi.S("b#y7"), "kind": abi.S("ping"), "v": abi.N("4")}),
		abi.M(abi.Item{"from": abi.S("b#y7"), "kind": abi.S("closed")}),
	}
	for i, d := range resp.Decisions {
		if d.Outcome != abi.Applied || len(d.Effects) != 1 || !d.Effects[0].Equal(want[i]) {
			t.Errorf("decision %d: %+v, want Applied with effect %v", i, d, want[i])
		}
		if d.Remove != (i == 2) {
			t.Errorf("decision %d: remove %v", i, d.Remove)
		}
	}
	if !resp.Removed || resp.State != nil || resp.Item != nil {
		t.Errorf("response removed %v state %v item %v: want the row removed", resp.Removed, resp.State, resp.Item)
	}
	// Without the Close: the state carries the context of the last event.
	resp, err = p.Evolve(ctx, &abi.EvolveRequest{Key: key, Events: []abi.SourcedEvent{
		{Source: "a", Event: tallyEvent("Alpha", "x1", 1, "Ping")}, {Source: "b", Event: tallyEvent("Beta", "y7", 4, "Ping")}}})
	if err != nil || resp.Removed || resp.State["count"].Str != "2" || resp.State["last"].Str != "b#y7" {
		t.Fatalf("state %+v %v", resp, err)
	}
}

// TestT1_AssemblyScriptRemoveRowWritesATombstone: the same plugin under the
// host with two streams, revision and a removal: the row holds both
// sources' context, then a Close removes it (a tombstone), and a later
// Ping starts it again from initial.
func TestT1_AssemblyScriptRemoveRowWritesATombstone(t *testing.T) {
	checkTallyTombstone(t, tallyWasm(t))
}

// checkTallyTombstone runs the checks of TestT1_… on the tally plugin at
// path.
func checkTallyTombstone(t *testing.T, path string) {
	ctx := context.Background()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "tally", false)
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [
	    {"name": "Alpha", "composite": ["alphaId"]}, {"name": "Beta", "composite": ["betaId"]}]},
	  "projections": [{"name": "tally", "plugin": %q, "table": %q,
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "Tally"}, "removal": {}}]}`, events, path, rows))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	ping := host.NewEvent{Type: "Ping", Data: abi.Item{}}
	a, err := h.Append(ctx, "Alpha", "x1", 0, ping)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Append(ctx, "Beta", "y7", 0, ping, host.NewEvent{Type: "Close", Data: abi.Item{}}, ping)
	if err != nil {
		t.Fatal(err)
	}
	key := abi.Item{"pk": abi.S("Tally"), "sk": abi.S("T")}
	res, err := h.ApplyEvents(ctx, "tally", a[0], b[0])
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Err != nil {
		t.Fatalf("apply: %v %+v", err, res.Rows)
	}
	row, ok, err := h.Row(ctx, "tally", key)
	if err != nil || !ok || row["count"].Str != "2" || row["last"].Str != "b#y7" {
		t.Fatalf("row %v %v %v: want count 2, last b#y7 (fold order a, then b)", row, ok, err)
	}
	res, err = h.ApplyEvents(ctx, "tally", b[1])
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Err != nil || !res.Rows[0].Removed || !res.Rows[0].Written {
		t.Fatalf("close: %v %+v", err, res.Rows)
	}
	if _, ok, err := h.Row(ctx, "tally", key); err != nil || ok {
		t.Fatalf("after Close the row reads absent: %v %v", ok, err)
	}
	res, err = h.ApplyEvents(ctx, "tally", b[2])
	if err != nil || res.Rows[0].Err != nil {
		t.Fatalf("ping after close: %v %+v", err, res.Rows)
	}
	row, ok, err = h.Row(ctx, "tally", key)
	if err != nil || !ok || row["count"].Str != "1" || row["last"].Str != "b#y7" {
		t.Errorf("row %v %v %v: want a new row from initial, count 1", row, ok, err)
	}
}
