package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// Records given up to a file (the sidecar's onFailure {"file": PATH}) are
// listed and replayed like those of a quarantine table: the commands find
// the file in the configuration (or take --file), replay marks what went
// through in PATH.replayed and never rewrites the file a reader appends
// to. They read only a quarantine table before.
func TestC4_QuarantineCommandsReadAFileDestination(t *testing.T) {
	ctx := context.Background()
	qfile := filepath.Join(t.TempDir(), "given-up.jsonl")
	cfgPath, env, h := quarantineDestConfig(t, fmt.Sprintf(`{"maxRetries": 2, "onFailure": {"file": %q}}`, qfile))
	_, err := quarantineOutput(t, "list", "--config", cfgPath)
	require.Error(t, err, "no record given up yet")
	assert.Contains(t, err.Error(), "quarantine file "+qfile+" does not exist: no record has been given up there yet")

	good, err := h.Append(ctx, "Order", "o-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad, err := h.Append(ctx, "Order", "o-2", 0, host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}})
	require.NoError(t, err)
	dest := quarantine.NewFile(qfile) // as host run's reader gives records up
	for i, ev := range []abi.Event{good[0], bad[0]} {
		require.NoError(t, dest.Send(ctx, quarantine.Entry{Projection: "summaries", Stream: "Order", Shard: "shardId-7", Attempts: 3, Reason: "row failed",
			Record: host.Record{EventName: "INSERT", EventID: fmt.Sprint("e", i), DynamoDB: host.StreamRecord{
				NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(500 + i)}}}))
	}
	entries, err := quarantine.ReadFile(qfile)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	ids := map[string]string{"o-1": entries[0].ID, "o-2": entries[1].ID}

	out, err := quarantineOutput(t, "list", "--config", cfgPath)
	require.NoError(t, err)
	assert.Regexp(t, ids["o-1"]+`\s+summaries\s+Order\s+o-1\s+1\s+OrderPlaced\s+shardId-7\s+500\s+`, out)
	assert.Regexp(t, ids["o-2"]+`\s+summaries\s+Order\s+o-2\s+1\s+OrderRefunded\s+shardId-7\s+501\s+`, out)
	assert.Contains(t, out, "2 quarantined in "+qfile)

	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, "an entry failed again")
	assert.Contains(t, out, ids["o-1"]+": replayed; its id was appended to "+qfile+".replayed, so list no longer shows it (the file itself is never rewritten)")
	assert.Contains(t, out, ids["o-2"]+": failed again, entry kept:")
	assert.Contains(t, out, "1 replayed, 1 failed again")
	row := env.Get(t, "order-summaries", abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	require.NotNil(t, row, "the replayed record's row is written")
	assert.Equal(t, "placed", row["status"].Str)

	out, err = quarantineOutput(t, "list", "--config", cfgPath, "--file", qfile) // --file: the same file, named
	require.NoError(t, err)
	assert.NotContains(t, out, ids["o-1"], "a replayed entry is no longer listed")
	assert.Contains(t, out, "1 quarantined in "+qfile)
	entries, err = quarantine.ReadFile(qfile)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the file a reader appends to is never rewritten")
	marks, err := os.ReadFile(qfile + quarantine.ReplayedSuffix)
	require.NoError(t, err)
	assert.Equal(t, ids["o-1"]+"\n", string(marks))
	_, err = quarantineOutput(t, "replay", "--config", cfgPath, "--id", ids["o-1"])
	assert.ErrorIs(t, err, quarantine.ErrNotFound, "replayed already")
}

// Records given up to a table named as the sidecar's onFailure destination
// (no top-level "quarantine") are listed, replayed and dropped as those of
// a quarantine table: the commands find the table in the configuration,
// or take --table. They said the configuration kept no record before.
func TestC4_QuarantineCommandsReadAnOnFailureTable(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, h := quarantineDestConfig(t, `{"maxRetries": 1, "onFailure": {"table": "given-up"}}`)
	good, err := h.Append(ctx, "Order", "o-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad, err := h.Append(ctx, "Order", "o-2", 0, host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}})
	require.NoError(t, err)
	dest, err := quarantine.NewTable(env.Client, "given-up") // as host run's reader gives records up
	require.NoError(t, err)
	var ids []string
	for i, ev := range []abi.Event{good[0], bad[0]} {
		e := quarantine.Entry{Projection: "summaries", Stream: "Order", Shard: "shardId-7", Attempts: 2, Reason: "row failed",
			Record: host.Record{EventName: "INSERT", EventID: fmt.Sprint("e", i), DynamoDB: host.StreamRecord{
				NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(600 + i)}}}
		require.NoError(t, dest.Send(ctx, e))
		ids = append(ids, quarantine.EntryID(e))
	}

	out, err := quarantineOutput(t, "list", "--config", cfgPath)
	require.NoError(t, err, out)
	assert.Contains(t, out, ids[0])
	assert.Contains(t, out, ids[1])
	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--id", ids[0])
	require.NoError(t, err, out)
	assert.Contains(t, out, ids[0]+": replayed; entry deleted from table given-up")
	out, err = quarantineOutput(t, "drop", "--config", cfgPath, "--table", "given-up", ids[1])
	require.NoError(t, err, out)
	left, err := dest.All(ctx)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// quarantineDestConfig writes a configuration whose sidecar gives records
// up as failure says (JSON), creates its tables and returns its path, the
// env and an event-store host.
func quarantineDestConfig(t *testing.T, failure string) (string, *testenv.Env, *host.Host) {
	t.Helper()
	ctx := context.Background()
	env := testenv.Start(t)
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `{
  "endpoint": %q,
  "eventStore": {"table": "shop-events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "order-summaries", "checkpoint": {"field": "version"}}],
  "sidecar": {"leaseTable": "leases", "failure": %s}
}`, env.Server.Endpoint(), wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm"), failure), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	old := tablesOut
	tablesOut = &strings.Builder{}
	require.NoError(t, runTables(ctx, []string{"create", "--config", cfgPath}))
	tablesOut = old
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly())
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	return cfgPath, env, h
}
