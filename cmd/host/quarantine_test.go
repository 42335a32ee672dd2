package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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

// quarantineOutput runs `host quarantine ARGS` and returns what it printed.
func quarantineOutput(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	old := quarantineOut
	quarantineOut = &out
	defer func() { quarantineOut = old }()
	err := runQuarantine(context.Background(), args)
	return out.String(), err
}

// `tables create` creates the quarantine table; `quarantine list` shows
// the records a reader gave up on (as text and as JSON); `quarantine
// replay --all` runs them through the Wasm plugin, deletes the one that
// now succeeds and keeps, with its reason, the one that fails again.
func TestC4_QuarantineCommandsListAndReplay(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `{
  "endpoint": %q,
  "eventStore": {"table": "shop-events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "order-summaries", "checkpoint": {"field": "version"}}],
  "quarantine": {"table": "shop-quarantine"}
}`, env.Server.Endpoint(), wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	var tout bytes.Buffer
	old := tablesOut
	tablesOut = &tout
	require.NoError(t, runTables(ctx, []string{"create", "--config", cfgPath}))
	tablesOut = old
	assert.Regexp(t, `shop-quarantine\s+quarantine\s+created`, tout.String())

	out, err := quarantineOutput(t, "list", "--config", cfgPath)
	require.NoError(t, err)
	assert.Contains(t, out, "no record is quarantined")

	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(ctx)
	good, err := h.Append(ctx, "Order", "o-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad, err := h.Append(ctx, "Order", "o-2", 0, host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}})
	require.NoError(t, err)
	q, err := quarantine.NewTable(env.Client, "shop-quarantine")
	require.NoError(t, err)
	ids := map[string]string{}
	for i, ev := range []abi.Event{good[0], bad[0]} {
		e := quarantine.Entry{Projection: "summaries", Stream: "Order", Shard: "shardId-7", Attempts: 3, Reason: "row failed:\n throttled",
			Record: host.Record{EventName: "INSERT", EventID: fmt.Sprint("e", i), DynamoDB: host.StreamRecord{
				NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(500 + i)}}}
		require.NoError(t, q.Send(ctx, e))
		ids[ev.StreamID] = quarantine.EntryID(e)
	}

	out, err = quarantineOutput(t, "list", "--config", cfgPath)
	require.NoError(t, err)
	assert.Regexp(t, `ID\s+PROJECTION\s+STREAM\s+STREAM ID\s+VERSION\s+EVENT TYPE\s+SHARD\s+SEQUENCE\s+FIRST SEEN\s+ATTEMPTS\s+REASON`, out)
	assert.Regexp(t, ids["o-1"]+`\s+summaries\s+Order\s+o-1\s+1\s+OrderPlaced\s+shardId-7\s+500\s+\S+\s+3\s+row failed: throttled`, out)
	assert.Regexp(t, ids["o-2"]+`\s+summaries\s+Order\s+o-2\s+1\s+OrderRefunded\s+shardId-7\s+501\s+`, out)
	assert.Contains(t, out, "2 quarantined in shop-quarantine")

	out, err = quarantineOutput(t, "list", "--config", cfgPath, "--json")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var e quarantine.Entry
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &e))
	assert.Equal(t, "summaries", e.Projection)
	assert.NotEmpty(t, e.Record.DynamoDB.NewImage)

	_, err = quarantineOutput(t, "replay", "--config", cfgPath)
	assert.ErrorContains(t, err, "--id ID (one entry) or --all")
	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, "an entry failed again")
	assert.Contains(t, out, ids["o-1"]+": replayed; entry deleted from table shop-quarantine")
	assert.Contains(t, out, ids["o-2"]+": failed again, entry kept:")
	assert.Contains(t, out, `OrderRefunded`)
	assert.Contains(t, out, "1 replayed, 1 failed again")
	row := env.Get(t, "order-summaries", abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "placed", row["status"].Str, "the replayed record's row is written")
	left, err := q.All(ctx)
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, ids["o-2"], left[0].ID)

	_, err = quarantineOutput(t, "replay", "--config", cfgPath, "--id", "nope")
	assert.ErrorIs(t, err, quarantine.ErrNotFound)
	out, err = quarantineOutput(t, "--help")
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, out, "host quarantine replay --config dynafold.json --all")
}
