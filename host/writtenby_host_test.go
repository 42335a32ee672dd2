package host_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// ledgerVersion is the test ledger under another version. From 1.1.0 on,
// it applies the events 1.0.0 skipped (a "Skip" folds as an "Add"), and an
// event whose data says v11 = "Close" removes its row.
type ledgerVersion struct {
	*testlogic.Ledger
	version string
}

func (l ledgerVersion) Describe() abi.Description {
	d := l.Ledger.Describe()
	d.Version = l.version
	return d
}

func (l ledgerVersion) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	if l.version == "1.0.0" {
		return l.Ledger.Evolve(ctx, req)
	}
	q := *req
	q.Events = make([]abi.SourcedEvent, len(req.Events))
	for i, se := range req.Events {
		if se.Event.Type == "Skip" {
			se.Event.Type = "Add"
		}
		if se.Event.Data["v11"].Str == "Close" {
			se.Event.Type = "Close"
		}
		q.Events[i] = se
	}
	return l.Ledger.Evolve(ctx, &q)
}

// versionedLedgerHosts returns hosts of one event store and read model
// serving the ledger at 1.0.0 and at 1.1.0, recording writtenBy.
func versionedLedgerHosts(t *testing.T) (v10, v11 *host.Host, env *testenv.Env, rows string) {
	t.Helper()
	env = testenv.Start(t)
	rows = env.Table(t, "ledger", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: rows,
			Checkpoint: host.CheckpointConfig{Field: "version"}, WrittenBy: "writtenBy",
			ReadModel: host.ReadModelConfig{EntityType: "LedgerRow"}, Removal: &host.RemovalConfig{}}},
	}
	open := func(version string) *host.Host {
		h, err := host.New(context.Background(), cfg, host.WithNative("ledger", ledgerVersion{&testlogic.Ledger{}, version}),
			host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		require.NoError(t, err)
		t.Cleanup(func() { h.Close(context.Background()) })
		return h
	}
	return open("1.0.0"), open("1.1.0"), env, rows
}

// TestY3_RebuildWrittenByRederivesEveryRowOfTheInstancesItFinds is the
// issue's case 2: 1.0.0 skips events that 1.1.0 applies, one of which
// makes a row of its own. Rebuilding the rows 1.0.0 wrote re-derives every
// row of every stream instance that fed one of them, as `rebuild --id`
// does: the row only 1.1.0 makes is created, a row 1.1.0 folds otherwise
// is changed, one it folds the same is unchanged, one it removes is
// removed, and the summary counts each. An instance that fed no row 1.0.0
// wrote is not rebuilt (a backfill re-derives it).
func TestY3_RebuildWrittenByRederivesEveryRowOfTheInstancesItFinds(t *testing.T) {
	ctx := context.Background()
	v10, v11, env, rows := versionedLedgerHosts(t)
	ev := func(typ, n, row string, more ...string) host.NewEvent {
		d := abi.Item{"n": abi.N(n), "row": abi.S(row)}
		if len(more) > 0 {
			d["v11"] = abi.S(more[0])
		}
		return host.NewEvent{Type: typ, Data: d}
	}
	var all []abi.Event
	for id, evs := range map[string][]host.NewEvent{
		"a": {ev("Add", "1", "a"), ev("Skip", "5", "extra-a"), ev("Skip", "2", "a")},
		"d": {ev("Add", "4", "d"), ev("Add", "1", "gone-d", "Close")},
		"c": {ev("Skip", "7", "extra-c")},
	} {
		got, err := v10.Append(ctx, testlogic.Stream, id, 0, evs...)
		require.NoError(t, err)
		all = append(all, got...)
	}
	res, err := v10.ApplyEvents(ctx, "ledger", all...)
	require.NoError(t, err)
	for _, o := range res.Rows {
		require.NoError(t, o.Err)
	}
	get := func(row string) abi.Item { return env.Get(t, rows, testlogic.RowKey(row)) }
	require.Equal(t, "1", get("a")["total"].Str, "1.0.0 skipped v3")
	require.Nil(t, get("extra-a"), "1.0.0 skipped the event that makes it")
	require.Equal(t, "ledger@1.0.0", get("gone-d")["writtenBy"].Str)

	rep, err := v11.RebuildWrittenBy(ctx, "ledger", "1.0.0", false)

	require.NoError(t, err)
	assert.Equal(t, 3, rep.Rows, "a, d and gone-d were written by 1.0.0")
	assert.ElementsMatch(t, []string{"a", "d"}, rep.Streams)
	assert.Len(t, rep.Outcomes, 4, "every row of a and d, each once")
	assert.Equal(t, 1, rep.Created, "extra-a")
	assert.Equal(t, 1, rep.Changed, "a")
	assert.Equal(t, 1, rep.Unchanged, "d")
	assert.Equal(t, 1, rep.Removed, "gone-d")
	extra := get("extra-a")
	require.NotNil(t, extra, "the row only 1.1.0 makes is created")
	assert.Equal(t, "5", extra["total"].Str)
	assert.Equal(t, "ledger@1.1.0", extra["writtenBy"].Str)
	assert.Equal(t, "3", get("a")["total"].Str, "1.1.0 applies v3")
	assert.Equal(t, "4", get("d")["total"].Str)
	assert.Equal(t, "LedgerRow#tombstone", get("gone-d")["__edd_e__"].Str)
	assert.Nil(t, get("extra-c"), "c fed no row 1.0.0 wrote: a backfill makes its row")

	// Everything 1.0.0 wrote is re-derived: a second run finds nothing.
	rep, err = v11.RebuildWrittenBy(ctx, "ledger", "1.0.0", false)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Rows)
}

// A row 1.0.0 wrote that 1.1.0 then folded on (the events after a hot
// swap, before anyone rebuilt) derives from both versions' folds: it names
// 1.1.0 as its writer and 1.0.0 among the versions before it, so
// rebuilding the rows of 1.0.0 re-derives it too. Before, writtenBy named
// only the last writer and the rebuild missed every such row (a user's
// trial: 860 rows left wrong after the documented rebuild). A rebuilt row
// folds from the initial state and names its writer alone; verify does
// not count the list as drift.
func TestY3_RebuildWrittenByFindsRowsALaterVersionFoldedOnTopOf(t *testing.T) {
	ctx := context.Background()
	v10, v11, env, rows := versionedLedgerHosts(t)
	add := func(typ, n string) host.NewEvent {
		return host.NewEvent{Type: typ, Data: abi.Item{"n": abi.N(n), "row": abi.S("a")}}
	}
	evs, err := v10.Append(ctx, testlogic.Stream, "a", 0, add("Add", "1"), add("Skip", "5"), add("Add", "1"))
	require.NoError(t, err)
	_, err = v10.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	evs, err = v11.Append(ctx, testlogic.Stream, "a", 3, add("Add", "2"))
	require.NoError(t, err)
	_, err = v11.ApplyEvents(ctx, "ledger", evs...) // 1.1.0 folds on 1.0.0's total of 2
	require.NoError(t, err)
	row := env.Get(t, rows, testlogic.RowKey("a"))
	require.Equal(t, "4", row["total"].Str, "1.0.0 skipped the 5")
	assert.Equal(t, "ledger@1.1.0", row["writtenBy"].Str)
	assert.Equal(t, []abi.Value{abi.S("ledger@1.0.0")}, row["writtenByBefore"].List)

	rep, err := v11.RebuildWrittenBy(ctx, "ledger", "1.0.0", false)

	require.NoError(t, err)
	assert.Equal(t, 1, rep.Rows, "the row 1.1.0 wrote on top of 1.0.0's")
	assert.Equal(t, 1, rep.Changed)
	row = env.Get(t, rows, testlogic.RowKey("a"))
	assert.Equal(t, "9", row["total"].Str, "re-derived by 1.1.0 alone")
	assert.Equal(t, "ledger@1.1.0", row["writtenBy"].Str)
	assert.NotContains(t, row, "writtenByBefore", "a rebuild folds from the initial state")
	rep, err = v11.RebuildWrittenBy(ctx, "ledger", "1.0.0", false)
	require.NoError(t, err)
	assert.Zero(t, rep.Rows)

	evs, err = v10.Append(ctx, testlogic.Stream, "a", 4, add("Add", "1"))
	require.NoError(t, err)
	_, err = v10.ApplyEvents(ctx, "ledger", evs...) // a rollback to 1.0.0 folds on
	require.NoError(t, err)
	assert.Equal(t, []abi.Value{abi.S("ledger@1.1.0")}, env.Get(t, rows, testlogic.RowKey("a"))["writtenByBefore"].List)
	require.NoError(t, err)
	v, err := v11.Verify(ctx, host.VerifyOptions{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	require.NoError(t, err)
	assert.Empty(t, v.Findings, "1.1.0 folds the row as stored: the versions' list is not drift")
}

// Every row but the serving version's own: a row the serving version
// folded on top of what an older one wrote names that one among the
// versions before it, and is found too; once rebuilt, nothing is left.
func TestY3_RebuildNotWrittenByFindsRowsTheServingVersionFoldedOn(t *testing.T) {
	ctx := context.Background()
	v10, v11, env, rows := versionedLedgerHosts(t)
	add := func(typ, n, row string) host.NewEvent {
		return host.NewEvent{Type: typ, Data: abi.Item{"n": abi.N(n), "row": abi.S(row)}}
	}
	evs, err := v10.Append(ctx, testlogic.Stream, "a", 0, add("Add", "1", "a"), add("Skip", "5", "a"))
	require.NoError(t, err)
	_, err = v10.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	evs, err = v11.Append(ctx, testlogic.Stream, "a", 2, add("Add", "2", "a"))
	require.NoError(t, err)
	_, err = v11.ApplyEvents(ctx, "ledger", evs...) // 1.1.0 folds on 1.0.0's total
	require.NoError(t, err)
	evs, err = v11.Append(ctx, testlogic.Stream, "b", 0, add("Add", "1", "b"))
	require.NoError(t, err)
	_, err = v11.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	require.Equal(t, "ledger@1.1.0", env.Get(t, rows, testlogic.RowKey("a"))["writtenBy"].Str)

	rep, err := v11.RebuildWrittenBySelection(ctx, "ledger", host.WrittenBySelection{NotBy: "1.1.0"}, false)

	require.NoError(t, err)
	assert.Equal(t, "ledger@1.1.0", rep.NotWrittenBy)
	assert.Equal(t, 1, rep.Rows, "a; b is 1.1.0's alone")
	assert.Equal(t, []string{"a"}, rep.Streams)
	assert.Equal(t, "8", env.Get(t, rows, testlogic.RowKey("a"))["total"].Str, "re-derived by 1.1.0 alone")
	rep, err = v11.RebuildWrittenBySelection(ctx, "ledger", host.WrittenBySelection{NotBy: "1.1.0"}, false)
	require.NoError(t, err)
	assert.Zero(t, rep.Rows)
}
