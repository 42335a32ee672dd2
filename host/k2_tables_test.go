package host_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// host run reading a Kinesis data stream does not need the event table's
// own DynamoDB stream: the start-up table check accepts an event table
// without one when sidecar.kinesis is set, and still asks for it when not.
func TestK2_TableCheckNeedsNoDynamoDBStreamWhenReadingKinesis(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events := env.Table(t, "events", false) // no DynamoDB stream
	rows := env.Table(t, "ledger", false)
	cfg := func(kinesis *host.KinesisConfig) *host.Config {
		return &host.Config{
			EventStore: host.EventStoreConfig{Table: events, Schema: "test", SchemaVersion: 1,
				Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
			Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: rows,
				Checkpoint: host.CheckpointConfig{Field: "version"}}},
			Sidecar: &host.SidecarConfig{LeaseTable: "leases-k2", Kinesis: kinesis},
		}
	}
	open := func(c *host.Config) *host.Host {
		h, err := host.New(ctx, c, host.WithNative("ledger", &testlogic.Ledger{}),
			host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		t.Cleanup(func() { h.Close(ctx) })
		return h
	}
	// The lease table, made as host tables create makes it.
	lc := cfg(nil)
	lc.EventStore.Table = env.Table(t, "other-events", true)
	_, err := open(lc).CreateTables(ctx)
	require.NoError(t, err)

	err = open(cfg(nil)).CheckTables(ctx)
	var te *host.TablesError
	require.ErrorAs(t, err, &te, "reading the table's DynamoDB stream needs it")
	require.Len(t, te.Problems, 1)
	assert.Equal(t, events, te.Problems[0].Table)
	assert.Equal(t, "has no stream", te.Problems[0].Problem)

	assert.NoError(t, open(cfg(&host.KinesisConfig{Stream: "events-feed"})).CheckTables(ctx))
}
