package host_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestM3_APerSourceFieldThatCannotTellInstancesApartIsRefusedAtLoad: a
// source's own checkpoint field without an instance field and without a
// map cannot tell a second stream instance from the first (its events would
// be compared with the first one's checkpoint and reported already
// applied), so the host refuses it when it loads, naming the JSON path and
// what to add.
func TestM3_APerSourceFieldThatCannotTellInstancesApartIsRefusedAtLoad(t *testing.T) {
	env := testenv.Start(t)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: env.Table(t, "ledger", false),
			Checkpoint: host.CheckpointConfig{Sources: map[string]host.SourceCheckpointConfig{testlogic.Stream: {Field: "acctVersion", Offset: -1}}},
			Revision:   &host.RevisionConfig{Field: "rev"}}},
	}
	_, err := host.New(context.Background(), cfg, host.WithNative("ledger", &testlogic.Ledger{}),
		host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err == nil {
		t.Fatal("a per-source checkpoint field without instanceField and map was accepted")
	}
	for _, w := range []string{`projection "ledger".checkpoint.sources.Acct.instanceField`, "[EDD-9081]", "checkpoint.map"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
	// With the instance field, the row records which instance owns the
	// field; with the map, every other instance has a place.
	for _, sc := range []host.CheckpointConfig{
		{Sources: map[string]host.SourceCheckpointConfig{testlogic.Stream: {Field: "acctVersion", InstanceField: "acctId"}}},
		{Map: "checkpoints", Sources: map[string]host.SourceCheckpointConfig{testlogic.Stream: {Field: "acctVersion", InstanceField: "acctId"}}},
	} {
		cfg.Projections[0].Checkpoint = sc
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", sc, err)
		}
	}
}
