package host_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestM9_RebuildWrittenByRebuildsEachRowFromAllOfItsInstances: a row two
// stream instances feed (a adds 1, b adds 10), damaged, is rebuilt by
// plugin version once, from both, keeping both checkpoints.
func TestM9_RebuildWrittenByRebuildsEachRowFromAllOfItsInstances(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	rows := env.Table(t, "ledger", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: rows,
			Checkpoint: host.CheckpointConfig{Map: "checkpoints"}, Revision: &host.RevisionConfig{Field: "rev"}, WrittenBy: "writtenBy"}},
	}
	h, err := host.New(ctx, cfg, host.WithNative("ledger", &testlogic.Ledger{}), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	a, b := appendAdd(t, h, "a", "1"), appendAdd(t, h, "b", "10")
	res, err := h.ApplyEvents(ctx, "ledger", a, b)
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	key := testlogic.RowKey("x")
	damaged := env.Get(t, rows, key)
	damaged["total"] = abi.N("999")
	env.Put(t, rows, damaged)

	rep, err := h.RebuildWrittenBy(ctx, "ledger", "1.0.0", false)

	require.NoError(t, err)
	assert.Equal(t, 1, rep.Rows)
	assert.ElementsMatch(t, []string{"a", "b"}, rep.Streams)
	require.Len(t, rep.Outcomes, 1, "the row is rebuilt once")
	row := env.Get(t, rows, key)
	assert.Equal(t, "11", row["total"].Str, "from both instances")
	assert.Equal(t, "1", row["checkpoints"].Map["Acct#a"].Str)
	assert.Equal(t, "1", row["checkpoints"].Map["Acct#b"].Str)
}
