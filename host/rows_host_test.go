package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// tombHost is a host whose ledger projection removes rows (Close), keeps
// a checkpoint map and a revision, and commits one effect per applied
// event to an outbox in the rows' partitions, delivered by no one.
func tombHost(t *testing.T) (*host.Host, *testenv.Env, string) {
	t.Helper()
	ctx := context.Background()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "ledger", false)
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": %q,
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "LedgerRow"}, "removal": {},
	    "outbox": {}}]}`, events, testlogic.Stream, rows))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 1)), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	return h, env, rows
}

// fold appends the events to stream instance id (its row is id) and
// applies them.
func fold(t *testing.T, h *host.Host, id string, evs ...host.NewEvent) []abi.Event {
	t.Helper()
	ctx := context.Background()
	head, err := h.Head(ctx, testlogic.Stream, id)
	require.NoError(t, err)
	out, err := h.Append(ctx, testlogic.Stream, id, head, evs...)
	require.NoError(t, err)
	res, err := h.ApplyEvents(ctx, "ledger", out...)
	require.NoError(t, err)
	require.NoError(t, res.Rows[0].Err)
	return out
}

var closeRow = host.NewEvent{Type: "Close", Data: abi.Item{}}

// Rows reads 252 keys in ⌈252/100⌉ batches, strongly consistent (a write
// made a moment ago is seen although eventually consistent reads are
// stale), with half the keys left unprocessed by the server and read
// again; a removed row's tombstone and a missing key are both absent.
func TestT2_RowsReadsConsistentlyInBatchesAndTombstonesAreAbsent(t *testing.T) {
	ctx := context.Background()
	h, env, table := tombHost(t)
	fold(t, h, "gone", add(1), closeRow)
	var keys []abi.Item
	for i := range 250 {
		it := testlogic.RowKey(fmt.Sprint("r", i))
		keys = append(keys, abi.CloneItem(it))
		it["total"] = abi.N(fmt.Sprint(i))
		env.Put(t, table, it)
	}
	keys = append(keys, testlogic.RowKey("gone"), testlogic.RowKey("never"))
	env.Server.SetFaults(ddblocal.FaultConfig{Seed: 7, StaleReads: time.Hour,
		Rates: map[string]map[string]float64{"BatchGetItem": {ddblocal.FaultUnprocessed: 0.5}}})
	t.Cleanup(func() { env.Server.SetFaults(ddblocal.FaultConfig{}) })
	fresh := testlogic.RowKey("r7")
	fresh["total"] = abi.N("700")
	env.Put(t, table, fresh) // an eventually consistent read still sees 7
	k7, err := ddbclient.ToAttributeMap(testlogic.RowKey("r7"))
	require.NoError(t, err)
	stale, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: k7})
	require.NoError(t, err)
	require.Equal(t, &types.AttributeValueMemberN{Value: "7"}, stale.Item["total"], "the server serves stale eventually consistent reads")
	h.ResetRequestCounts()

	rows, err := h.Rows(ctx, "ledger", keys)

	require.NoError(t, err)
	require.Len(t, rows, 252)
	for i := range 250 {
		require.NotNil(t, rows[i], "row r%d", i)
		want := fmt.Sprint(i)
		if i == 7 {
			want = "700"
		}
		assert.Equal(t, want, rows[i]["total"].Str, "row r%d", i)
	}
	assert.Nil(t, rows[250], "a tombstone is absent")
	assert.Nil(t, rows[251], "a missing row is absent")
	counts := h.RequestCounts()
	assert.Greater(t, counts["BatchGetItem"], int64(3), "3 batches of at most 100 keys, and the unprocessed keys read again")
	assert.Zero(t, counts["GetItem"], "no key is read alone")
}

// QueryRows leaves a projection's tombstones and outbox items out; the
// filter RowFilter documents, pasted into a plain Query, does the same,
// while the plain Query without it returns them.
func TestT2_QueriesLeaveTombstonesAndOutboxItemsOut(t *testing.T) {
	ctx := context.Background()
	h, env, table := tombHost(t)
	fold(t, h, "a", add(1), add(2)) // a row and two pending effects in its partition
	fold(t, h, "b", add(5), closeRow)

	for _, tc := range []struct {
		row  string
		want int
	}{{"a", 1}, {"b", 0}} {
		q := host.RowQuery{KeyCondition: "pk = :pk", Values: map[string]abi.Value{":pk": testlogic.RowKey(tc.row)["pk"]}}
		rows, err := h.QueryRows(ctx, "ledger", q)
		require.NoError(t, err)
		require.Len(t, rows, tc.want, "row %s", tc.row)
		if tc.want == 1 {
			assert.Equal(t, "3", rows[0]["total"].Str)
		}

		raw, err := env.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "Ledger#" + tc.row}}})
		require.NoError(t, err)
		assert.Greater(t, len(raw.Items), tc.want, "row %s: without the filter the query sees the tombstone and outbox items", tc.row)

		f, err := h.RowFilter("ledger")
		require.NoError(t, err)
		vals, err := ddbclient.ToAttributeMap(f.Values)
		require.NoError(t, err)
		vals[":pk"] = &types.AttributeValueMemberS{Value: "Ledger#" + tc.row}
		filtered, err := env.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			KeyConditionExpression: aws.String("pk = :pk"), FilterExpression: aws.String(f.Expression),
			ExpressionAttributeNames: f.Names, ExpressionAttributeValues: vals})
		require.NoError(t, err)
		assert.Len(t, filtered.Items, tc.want, "row %s: the documented filter", tc.row)
	}
}

// CreateRow over a tombstone carries its checkpoints and sets the revision
// one higher, so a late redelivery of the removed row's events is already
// applied and leaves the created row alone; over a row it refuses, and it
// will not set what the projection keeps.
func TestT2_CreateRowOverATombstoneCarriesItsCheckpoints(t *testing.T) {
	ctx := context.Background()
	h, env, table := tombHost(t)
	evs := fold(t, h, "a", add(1), add(2), closeRow)
	tomb := env.Get(t, table, testlogic.RowKey("a"))
	require.Equal(t, "LedgerRow#tombstone", tomb["__edd_e__"].Str)

	item := testlogic.RowKey("a")
	item["total"], item["log"] = abi.N("100"), abi.S("created")
	written, err := h.CreateRow(ctx, "ledger", item)

	require.NoError(t, err)
	row := env.Get(t, table, testlogic.RowKey("a"))
	assert.Equal(t, written["rev"], row["rev"])
	assert.Equal(t, "2", row["rev"].Str, "the tombstone's revision 1, one higher")
	assert.Equal(t, tomb["checkpoints"], row["checkpoints"], "the tombstone's checkpoints are carried")
	assert.NotContains(t, row, "__edd_e__")
	got, ok, err := h.Row(ctx, "ledger", testlogic.RowKey("a"))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "100", got["total"].Str)

	res, err := h.ApplyEvents(ctx, "ledger", evs...) // a late redelivery, Close included
	require.NoError(t, err)
	o := res.Rows[0]
	require.NoError(t, o.Err)
	assert.False(t, o.Written, "already applied: the created row is not undone")
	assert.Len(t, o.Instances[0].AlreadyApplied, 3)
	assert.Equal(t, "100", env.Get(t, table, testlogic.RowKey("a"))["total"].Str)

	// A later event folds into the created row.
	fold(t, h, "a", add(7))
	assert.Equal(t, "107", env.Get(t, table, testlogic.RowKey("a"))["total"].Str)
	assert.Equal(t, "3", env.Get(t, table, testlogic.RowKey("a"))["rev"].Str)

	_, err = h.CreateRow(ctx, "ledger", item)
	assert.ErrorIs(t, err, host.ErrRowExists)
	fresh := testlogic.RowKey("new")
	fresh["rev"] = abi.N("5")
	_, err = h.CreateRow(ctx, "ledger", fresh)
	assert.ErrorIs(t, err, host.ErrProjectionAttribute)
	delete(fresh, "rev")
	_, err = h.CreateRow(ctx, "ledger", fresh)
	require.NoError(t, err)
	assert.Equal(t, "1", env.Get(t, table, testlogic.RowKey("new"))["rev"].Str, "a row created where none was gets revision.initial")
}
