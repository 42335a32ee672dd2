package host_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// raceHost is a ledger host whose evolve, once armed, runs the function
// armed on its next call only: between the engine's read of the row and its
// write.
func raceHost(t *testing.T, pc host.ProjectionConfig) (h *host.Host, env *testenv.Env, rows string, arm func(func())) {
	t.Helper()
	env = testenv.Start(t)
	rows = env.Table(t, "ledger", false)
	pc.Name, pc.Plugin, pc.Table = "ledger", "native:ledger", rows
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{pc},
	}
	var (
		mu   sync.Mutex
		next func()
	)
	l := &testlogic.Ledger{OnEvolve: func(*abi.EvolveRequest) {
		mu.Lock()
		f := next
		next = nil
		mu.Unlock()
		if f != nil {
			f()
		}
	}}
	h, err := host.New(context.Background(), cfg, host.WithNative("ledger", l), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, env, rows, func(f func()) { mu.Lock(); next = f; mu.Unlock() }
}

// TestP5_ARowCreatedBeforeTheFirstWriteIsFoldedNotOverwritten is the
// issue's case 4 as it was met: single source, no revision. The read finds
// no row; before the write, other code creates it with Host.CreateRow
// (total 50, an attribute of its own, no checkpoint). The first write is
// conditioned on the key's absence, so it loses the race; the row is read
// again and, having no checkpoint, gets every event: total 53, the other
// writer's attribute kept.
func TestP5_ARowCreatedBeforeTheFirstWriteIsFoldedNotOverwritten(t *testing.T) {
	ctx := context.Background()
	key := testlogic.RowKey("a")
	h, env, rows, arm := raceHost(t, host.ProjectionConfig{Checkpoint: host.CheckpointConfig{Field: "version"}})
	var created error
	arm(func() {
		_, created = h.CreateRow(ctx, "ledger", abi.Item{"pk": key["pk"], "sk": key["sk"],
			"total": abi.N("50"), "count": abi.N("0"), "log": abi.S(""), "note": abi.S("opened by hand")})
	})
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("3")}})
	require.NoError(t, err)

	res, err := h.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	require.NoError(t, created, "the other writer's create")
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Attempts, "the first write lost the race")
	row := env.Get(t, rows, key)
	assert.Equal(t, "53", row["total"].Str, "the event folded into the row created meanwhile")
	assert.Equal(t, "opened by hand", row["note"].Str, "the other writer's attribute is kept")
	assert.Equal(t, "1", row["version"].Str)
}

// TestM5_ARowPutBeforeTheFirstWriteLosesNothingWithARevision: with a
// revision and a checkpoint map, a row another writer puts between the
// read and the first write, with neither revision nor checkpoints, is not
// replaced either: the write loses on the key's absence and folds every
// event over it.
func TestM5_ARowPutBeforeTheFirstWriteLosesNothingWithARevision(t *testing.T) {
	ctx := context.Background()
	key := testlogic.RowKey("x")
	h, env, rows, arm := raceHost(t, host.ProjectionConfig{Checkpoint: host.CheckpointConfig{Map: "checkpoints"}, Revision: &host.RevisionConfig{Field: "rev"}})
	arm(func() {
		env.Put(t, rows, abi.Item{"pk": key["pk"], "sk": key["sk"], "total": abi.N("50"), "count": abi.N("0"), "log": abi.S(""), "note": abi.S("migrated")})
	})
	a, b := appendAdd(t, h, "a", "1"), appendAdd(t, h, "b", "2")

	res, err := h.ApplyEvents(ctx, "ledger", a, b)
	require.NoError(t, err)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Attempts)
	row := env.Get(t, rows, key)
	assert.Equal(t, "53", row["total"].Str)
	assert.Equal(t, "migrated", row["note"].Str)
	assert.Equal(t, "1", row["rev"].Str, "the revision starts on the first write the engine makes")
	assert.Equal(t, "1", row["checkpoints"].Map["Acct#a"].Str)
	assert.Equal(t, "1", row["checkpoints"].Map["Acct#b"].Str)
}

// TestT2_ACreateOverATombstoneLosesToARowCreatedMeanwhile: single source,
// no revision, removal. The row is a tombstone at the read; before the
// write, Host.CreateRow creates a row over it (carrying its checkpoint).
// The engine's create is conditioned on the tombstone still being there,
// so it loses, reads the created row and folds the new event into it.
func TestT2_ACreateOverATombstoneLosesToARowCreatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	key := testlogic.RowKey("a")
	h, env, rows, arm := raceHost(t, host.ProjectionConfig{Checkpoint: host.CheckpointConfig{Field: "version"},
		ReadModel: host.ReadModelConfig{EntityType: "LedgerRow"}, Removal: &host.RemovalConfig{}})
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0,
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}}, host.NewEvent{Type: "Close", Data: abi.Item{}},
		host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("3")}})
	require.NoError(t, err)
	res, err := h.ApplyEvents(ctx, "ledger", evs[0], evs[1])
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	require.True(t, res.Rows[0].Removed)
	require.Equal(t, "LedgerRow#tombstone", env.Get(t, rows, key)["__edd_e__"].Str)

	var created error
	arm(func() {
		_, created = h.CreateRow(ctx, "ledger", abi.Item{"pk": key["pk"], "sk": key["sk"],
			"total": abi.N("50"), "count": abi.N("0"), "log": abi.S(""), "note": abi.S("reopened by hand")})
	})
	res, err = h.ApplyEvents(ctx, "ledger", evs[2])
	require.NoError(t, err)
	require.NoError(t, created)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.Equal(t, 2, o.Attempts, "the create over the tombstone lost the race")
	row := env.Get(t, rows, key)
	assert.Equal(t, "53", row["total"].Str, "v3 folded into the row created meanwhile")
	assert.Equal(t, "reopened by hand", row["note"].Str)
	assert.Equal(t, "3", row["version"].Str)
	_, marked := row["__edd_e__"]
	assert.False(t, marked, "a row, not a tombstone")
}
