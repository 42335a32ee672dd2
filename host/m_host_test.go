package host_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// ledgerHost runs the test ledger logic natively with the given checkpoint
// and revision configuration.
func ledgerHost(t *testing.T, cp host.CheckpointConfig, rev *host.RevisionConfig) *host.Host {
	t.Helper()
	return ledgerHostWith(t, cp, rev)
}

// ledgerHostWith is ledgerHost with more options.
func ledgerHostWith(t *testing.T, cp host.CheckpointConfig, rev *host.RevisionConfig, opts ...host.Option) *host.Host {
	t.Helper()
	env := testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: env.Table(t, "ledger", false),
			Checkpoint: cp, Revision: rev}},
	}
	h, err := host.New(context.Background(), cfg, append([]host.Option{host.WithNative("ledger", &testlogic.Ledger{}),
		host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func appendAdd(t *testing.T, h *host.Host, streamID string, n string) abi.Event {
	t.Helper()
	evs, err := h.Append(context.Background(), testlogic.Stream, streamID, 0,
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(n), "row": abi.S("x")}})
	if err != nil {
		t.Fatal(err)
	}
	return evs[0]
}

// TestM3_HostKeepsACheckpointPerInstanceInTheMap: checkpoint.map and
// revision.initial 0 reach the engine through the configuration.
func TestM3_HostKeepsACheckpointPerInstanceInTheMap(t *testing.T) {
	ctx := context.Background()
	zero := int64(0)
	h := ledgerHost(t, host.CheckpointConfig{Map: "checkpoints"}, &host.RevisionConfig{Field: "rev", Initial: &zero})
	a, b := appendAdd(t, h, "s1", "1"), appendAdd(t, h, "s2", "2")

	for range 2 { // the second call is a redelivery
		res, err := h.ApplyEvents(ctx, "ledger", a, b)
		if err != nil || len(res.Rows) != 1 || res.Rows[0].Err != nil {
			t.Fatalf("ApplyEvents: %v %+v", err, res.Rows)
		}
	}
	row, ok, err := h.Row(ctx, "ledger", testlogic.RowKey("x"))
	if err != nil || !ok {
		t.Fatalf("row: %v %v", ok, err)
	}
	if row["total"].Str != "3" {
		t.Errorf("total %q, want 3: a redelivery is not folded again", row["total"].Str)
	}
	if row["rev"].Str != "0" {
		t.Errorf("rev %q, want 0 (revision.initial 0, one write)", row["rev"].Str)
	}
	m := row["checkpoints"].Map
	if m["Acct#s1"].Str != "1" || m["Acct#s2"].Str != "1" {
		t.Errorf("checkpoints %v, want Acct#s1 and Acct#s2 at 1", m)
	}
}

// TestM3_HostRefusesACheckpointForASourceThePluginDoesNotDeclare: the
// error names the declared sources.
func TestM3_HostRefusesACheckpointForASourceThePluginDoesNotDeclare(t *testing.T) {
	env := testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: env.Table(t, "ledger", false),
			Checkpoint: host.CheckpointConfig{Map: "checkpoints", Sources: map[string]host.SourceCheckpointConfig{"weigh": {Field: "wv", InstanceField: "ws"}}},
			Revision:   &host.RevisionConfig{Field: "rev"}}},
	}
	_, err := host.New(context.Background(), cfg, host.WithNative("ledger", &testlogic.Ledger{}),
		host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err == nil {
		t.Fatal("a checkpoint for an undeclared source was accepted")
	}
	for _, w := range []string{`checkpoint.sources names "weigh"`, `its sources are "Acct"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
}

// TestM3_HostKeepsASourcesOwnCheckpointField: checkpoint.sources reaches
// the engine: the field with its offset and the adopting instance.
func TestM3_HostKeepsASourcesOwnCheckpointField(t *testing.T) {
	ctx := context.Background()
	h := ledgerHost(t, host.CheckpointConfig{Map: "checkpoints", Sources: map[string]host.SourceCheckpointConfig{
		testlogic.Stream: {Field: "acctVersion", Offset: -1, InstanceField: "acctId"}}}, &host.RevisionConfig{Field: "rev"})
	a, b := appendAdd(t, h, "s1", "1"), appendAdd(t, h, "s2", "2")
	res, err := h.ApplyEvents(ctx, "ledger", a, b)
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Err != nil {
		t.Fatalf("ApplyEvents: %v %+v", err, res.Rows)
	}
	row, _, err := h.Row(ctx, "ledger", testlogic.RowKey("x"))
	if err != nil {
		t.Fatal(err)
	}
	if row["acctVersion"].Str != "0" || row["acctId"].Str != "s1" {
		t.Errorf("acctVersion %q acctId %q, want 0 (version 1, offset -1) and s1", row["acctVersion"].Str, row["acctId"].Str)
	}
	if m := row["checkpoints"].Map; m["Acct#s2"].Str != "1" || len(m) != 1 {
		t.Errorf("checkpoints %v, want only Acct#s2 at 1", m)
	}
}
