package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// An entry whose record can never succeed (its image has no eventType,
// nor has the event table's item, so it does not decode however often it
// is replayed) is dropped with `quarantine drop`, from a quarantine table and from an
// onFailure file alike; each line says what was done where. There was no
// way to clear such an entry before: `replay --all` failed forever.
func TestC4_QuarantineDropRemovesAnEntryThatNeverReplays(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	dir := t.TempDir()
	qfile := filepath.Join(dir, "given-up.jsonl")
	plugin := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
	cfgPath := filepath.Join(dir, "dynafold.json")
	fileCfg := filepath.Join(dir, "file.json")
	for path, extra := range map[string]string{
		cfgPath: `"quarantine": {"table": "shop-quarantine"}`,
		fileCfg: fmt.Sprintf(`"sidecar": {"leaseTable": "leases", "failure": {"onFailure": {"file": %q}}}`, qfile),
	} {
		require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `{
  "endpoint": %q,
  "eventStore": {"table": "shop-events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "order-summaries", "checkpoint": {"field": "version"}}],
  %s
}`, env.Server.Endpoint(), plugin, extra), 0o644))
	}
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
	defer h.Close(ctx)
	evs, err := h.Append(ctx, "Order", "m-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	img := h.EventItem(evs[0])
	delete(img, "eventType") // written by hand, behind the event store's back, and never repaired
	env.Put(t, "shop-events", img)
	q, entry, id := sendGivenUp(t, env, img, "e1", "700", `does not decode: attribute "eventType" is missing`)
	require.NoError(t, quarantine.NewFile(qfile).Send(ctx, entry))
	fileEntries, err := quarantine.ReadFile(qfile)
	require.NoError(t, err)
	fileID := fileEntries[0].ID

	out, err := quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, "the record fails again, as it was given up: %s", out)
	assert.Contains(t, out, id+": failed again, entry kept:")
	assert.Contains(t, err.Error(), "`host quarantine drop ID`")

	_, err = quarantineOutput(t, "drop", "--config", cfgPath)
	assert.ErrorContains(t, err, "name the entries to drop")
	out, err = quarantineOutput(t, "drop", id, "nope", "--config", cfgPath) // flags after the ids too
	require.Error(t, err, out)
	assert.ErrorIs(t, err, quarantine.ErrNotFound)
	assert.Contains(t, out, id+": dropped without replaying (projection -, event Order m-1 v1 -); entry deleted from table shop-quarantine")
	assert.Contains(t, out, "nope: not dropped: no quarantine entry")
	assert.Contains(t, out, "1 dropped from shop-quarantine, 1 not")
	left, err := q.All(ctx)
	require.NoError(t, err)
	assert.Empty(t, left)
	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.NoError(t, err)
	assert.Contains(t, out, "nothing to replay")

	out, err = quarantineOutput(t, "drop", "--config", fileCfg, fileID)
	require.NoError(t, err, out)
	assert.Contains(t, out, fileID+": dropped without replaying (projection -, event Order m-1 v1 -); its id was appended to "+qfile+".replayed, so list no longer shows it (the file itself is never rewritten)")
	out, err = quarantineOutput(t, "list", "--config", fileCfg)
	require.NoError(t, err)
	assert.Contains(t, out, "no record is quarantined")
	fileEntries, err = quarantine.ReadFile(qfile)
	require.NoError(t, err)
	assert.Len(t, fileEntries, 1, "the file a reader appends to is never rewritten")
}

// The reported case: an event put by hand without eventType is given up
// (it does not decode), then repaired in the event table with update-item.
// Replay runs the record's image, which still does not decode, so it runs
// the event table's item as it is now: the entry replays and is deleted,
// and the row has the event. Before, it failed again on every replay.
func TestC4_QuarantineReplayRunsARepairedEventFromTheEventTable(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries, cfg, h := quarantineTableSetup(t)
	evs, err := h.Append(ctx, "Order", "m-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("8")}})
	require.NoError(t, err)
	good := h.EventItem(evs[1])
	bad := abi.Item{}
	for k, v := range good {
		if k != "eventType" {
			bad[k] = v
		}
	}
	env.Put(t, cfg.EventStore.Table, bad) // as put by hand
	q, _, id := sendGivenUp(t, env, bad, "e2", "800", `does not decode: attribute "eventType" is missing`)

	out, err := quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, "not repaired yet: %s", out)
	assert.Contains(t, out, id+": failed again, entry kept:")
	assert.Contains(t, out, "eventType")

	env.Put(t, cfg.EventStore.Table, good) // the repair
	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.NoError(t, err, out)
	assert.Contains(t, out, id+": replayed from the event table's item as it is now (repaired since it was given up); entry deleted from table shop-quarantine")
	left, err := q.All(ctx)
	require.NoError(t, err)
	assert.Empty(t, left)
	row := env.Get(t, summaries, summaryKey("m-1"))
	require.NotNil(t, row)
	assert.Equal(t, "8", row["total"].Str, "the row has the repaired event (and, gap-filled, the one before)")
}

// An event whose image decodes but that the plugin fails (a price that is
// not a number) is given up, then repaired in place: replay runs it again
// from the event table's item as it is now, since that item differs from
// the record's image. Unrepaired, the item is the image, and the entry
// fails again as it did. Before, only an image that did not decode was
// read again, so this entry failed on every replay.
func TestC4_QuarantineReplayRunsAnEventRepairedInPlaceThatDecoded(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries, cfg, h := quarantineTableSetup(t)
	evs, err := h.Append(ctx, "Order", "m-2", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.S("lots")}})
	require.NoError(t, err)
	bad := h.EventItem(evs[1])
	_, _, id := sendGivenUp(t, env, bad, "e3", "900", "evolve failed: price is not a number")

	out, err := quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, "not repaired yet: %s", out)
	assert.Contains(t, out, id+": failed again, entry kept:")
	assert.Contains(t, out, "price is not a number")
	assert.Contains(t, out, "projection summaries: row ")
	assert.NotContains(t, out, "projection summaries: projection summaries:", "the projection named once")

	repaired := abi.CloneItem(bad)
	data := abi.CloneItem(repaired["data"].Map)
	data["price"] = abi.N("8")
	repaired["data"] = abi.M(data)
	env.Put(t, cfg.EventStore.Table, repaired) // update-item in place
	out, err = quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.NoError(t, err, out)
	assert.Contains(t, out, id+": replayed from the event table's item as it is now (repaired since it was given up)")
	row := env.Get(t, summaries, summaryKey("m-2"))
	require.NotNil(t, row)
	assert.Equal(t, "8", row["total"].Str, "the row has the repaired event")
}

// quarantineTableSetup is an order configuration with a quarantine table,
// its tables created, and a host that appends to its event store (closed
// when the test ends).
func quarantineTableSetup(t *testing.T) (cfgPath string, env *testenv.Env, summaries string, cfg *host.Config, h *host.Host) {
	t.Helper()
	ctx := context.Background()
	cfgPath, env, summaries = orderConfig(t)
	editConfig(t, cfgPath, func(cfg map[string]any) { cfg["quarantine"] = map[string]any{"table": "shop-quarantine"} })
	old := tablesOut
	tablesOut = &strings.Builder{}
	require.NoError(t, runTables(ctx, []string{"create", "--config", cfgPath}))
	tablesOut = old
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err = host.New(ctx, cfg, host.WithEventStoreOnly())
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	return cfgPath, env, summaries, cfg, h
}

// A record that fails again is checked against the event table's item for
// a repair; when that check could not be made (the table cannot be read),
// replay says so under the entry rather than leaving the operator to think
// the event table was read and unchanged.
func TestC4_QuarantineReplaySaysWhenTheEventTableCouldNotBeChecked(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, _, cfg, h := quarantineTableSetup(t)
	evs, err := h.Append(ctx, "Order", "m-3", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad := abi.CloneItem(h.EventItem(evs[0]))
	delete(bad, "eventType")
	q, _, id := sendGivenUp(t, env, bad, "e4", "1000", `does not decode: attribute "eventType" is missing`)

	_, err = env.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(cfg.EventStore.Table)})
	require.NoError(t, err)
	out, err := quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.Error(t, err, out)
	assert.Contains(t, out, id+": failed again, entry kept:")
	assert.Contains(t, out, id+": event table "+cfg.EventStore.Table+" does not exist, so a repair of its item could not be seen")
	left, err := q.All(ctx)
	require.NoError(t, err)
	assert.Len(t, left, 1, "the entry is kept")
}

// A given-up record whose event item was removed from the event table since
// (the documented fix of a bad item) is passed over by replay, as host run
// passes it over: the entry is deleted, and replay says why, where it said
// both "passed over" and "failed again, fix the cause".
func TestC4_QuarantineReplayPassesOverARecordWhoseItemWasRemoved(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, _, cfg, h := quarantineTableSetup(t)
	evs, err := h.Append(ctx, "Order", "m-3", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad := abi.CloneItem(h.EventItem(evs[0]))
	delete(bad, "eventType")
	q, entry, id := sendGivenUp(t, env, bad, "e4", "1000", `does not decode: attribute "eventType" is missing`)

	key, err := ddbclient.ToAttributeMap(entry.Record.DynamoDB.Keys)
	require.NoError(t, err)
	_, err = env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(cfg.EventStore.Table), Key: key})
	require.NoError(t, err)
	out, err := quarantineOutput(t, "replay", "--config", cfgPath, "--all")
	require.NoError(t, err, out)
	assert.Contains(t, out, id+": passed over, nothing to replay: its event item was removed from the event table since it was given up")
	assert.NotContains(t, out, id+": failed again")
	left, err := q.All(ctx)
	require.NoError(t, err)
	assert.Empty(t, left, "the entry is deleted")
}

// sendGivenUp puts a record of event item img, given up for reason, into
// the quarantine table shop-quarantine, as a worker would; it returns the
// table, the entry and its id.
func sendGivenUp(t *testing.T, env *testenv.Env, img abi.Item, eventID, seq, reason string) (*quarantine.Table, quarantine.Entry, string) {
	t.Helper()
	entry := quarantine.Entry{Stream: "Order", Shard: "shardId-1", Attempts: 3, Reason: reason,
		Record: host.Record{EventName: "INSERT", EventID: eventID, DynamoDB: host.StreamRecord{
			Keys: abi.Item{"pk": img["pk"], "sk": img["sk"]}, NewImage: img, SequenceNumber: seq}}}
	q, err := quarantine.NewTable(env.Client, "shop-quarantine")
	require.NoError(t, err)
	require.NoError(t, q.Send(context.Background(), entry))
	return q, entry, quarantine.EntryID(entry)
}
