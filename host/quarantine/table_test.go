package quarantine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// quarantined starts the ledger host with a quarantine section, creates
// the tables (the quarantine table included) and opens it.
func quarantined(t *testing.T) (*opstest.Fixture, *quarantine.Table) {
	t.Helper()
	f := opstest.Start(t, `, "quarantine": {"table": "ledger-quarantine"}`)
	reps, err := f.Host.CreateTables(context.Background())
	require.NoError(t, err)
	found := false
	for _, r := range reps {
		if r.Table == "ledger-quarantine" {
			found = true
			assert.Equal(t, "quarantine", r.Role)
			assert.True(t, r.Created)
		}
	}
	require.True(t, found, "CreateTables creates the quarantine table: %+v", reps)
	q, err := quarantine.NewTable(f.Env.Client, "ledger-quarantine")
	require.NoError(t, err)
	return f, q
}

// An entry round-trips through the table with its record (images
// included), reason, first-seen time and attempts; the same record given
// up again keeps its first-seen time and updates the rest; Delete removes
// it and a second Delete says there is none.
func TestC4_QuarantineTableKeepsTheRecordReasonAndFirstSeen(t *testing.T) {
	ctx := context.Background()
	f, q := quarantined(t)
	rec := f.Append(t, "a", 0, opstest.Add(4))[0]
	first := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	e := quarantine.Entry{Projection: "ledger", Stream: "arn:stream/1", Shard: "shardId-1", Record: rec,
		Reason: "row failed: timeout", FirstSeen: first, Attempts: 3}
	require.NoError(t, q.Send(ctx, e))
	id := quarantine.EntryID(e)
	got, err := q.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, got.ID)
	assert.Equal(t, rec, got.Record, "the record comes back as it was given up")
	assert.Equal(t, first, got.FirstSeen)
	assert.Equal(t, 3, got.Attempts)
	assert.Equal(t, "row failed: timeout", got.Reason)

	e.FirstSeen, e.Attempts, e.Reason = first.Add(time.Hour), 5, "row failed: trap"
	require.NoError(t, q.Send(ctx, e))
	got, err = q.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, first, got.FirstSeen, "the first failure's time is kept")
	assert.Equal(t, 5, got.Attempts)
	assert.Equal(t, "row failed: trap", got.Reason)

	require.NoError(t, q.Delete(ctx, id))
	assert.ErrorIs(t, q.Delete(ctx, id), quarantine.ErrNotFound)
	_, err = q.Get(ctx, id)
	assert.ErrorIs(t, err, quarantine.ErrNotFound)
}

// List pages through the entries with its token; All follows the pages.
func TestC4_QuarantineListPaginates(t *testing.T) {
	ctx := context.Background()
	f, q := quarantined(t)
	want := map[string]bool{}
	for i := range 7 {
		rec := f.Append(t, fmt.Sprint("s", i), 0, opstest.Add(i))[0]
		e := quarantine.Entry{Projection: "ledger", Shard: "shardId-1", Record: rec, Reason: "x"}
		require.NoError(t, q.Send(ctx, e))
		want[quarantine.EntryID(e)] = true
	}
	seen, pages := map[string]bool{}, 0
	for after := ""; ; {
		p, err := q.List(ctx, 3, after)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(p.Entries), 3)
		for _, e := range p.Entries {
			assert.False(t, seen[e.ID], "an entry is listed once")
			seen[e.ID] = true
		}
		pages++
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	assert.Equal(t, want, seen)
	assert.GreaterOrEqual(t, pages, 3)
	all, err := q.All(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 7)
}

// Replay runs each entry through ProcessBatch with the plugin serving now:
// an entry that succeeds is deleted and its row written; one that fails
// again stays, with why.
func TestC4_QuarantineReplayDeletesOnlyWhatSucceeds(t *testing.T) {
	ctx := context.Background()
	f, q := quarantined(t)
	good := f.Append(t, "good", 0, opstest.Add(2), opstest.Add(5))
	bad := f.Append(t, "bad", 0, opstest.Fail())
	var entries []quarantine.Entry
	for _, r := range []host.Record{good[1], bad[0]} {
		e := quarantine.Entry{Projection: "ledger", Shard: "shardId-1", Record: r, Reason: "gave up", Attempts: 4}
		require.NoError(t, q.Send(ctx, e))
		e.ID = quarantine.EntryID(e)
		entries = append(entries, e)
	}
	done, err := quarantine.Replay(ctx, f.Host, q, entries)
	require.NoError(t, err)
	require.Len(t, done, 2)
	assert.True(t, done[0].OK)
	assert.True(t, done[0].Deleted)
	assert.False(t, done[1].OK)
	assert.Contains(t, done[1].Why, "projection ledger")
	left, err := q.All(ctx)
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, entries[1].ID, left[0].ID)
	row := f.Env.Get(t, f.Rows, testlogic.RowKey("good"))
	assert.Equal(t, "7", row["total"].Str, "the replayed record's row is the fold, its gap filled")
	assert.Equal(t, "1,2", row["log"].Str)
}
