package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

func setup(t *testing.T) (*dynamo.DB, string) {
	t.Helper()
	db := dynamo.New(dynamotest.Client(t))
	table := dynamotest.CreateTable(t, db.Client(), "dynamo")
	db.ResetCounts()
	return db, table
}

func key(pk, sk string) abi.Item { return abi.Item{"pk": abi.S(pk), "sk": abi.S(sk)} }

func TestDynamo_EveryKindRoundTripsThroughPutAndGet(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	in := everyKind()
	require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: in}))
	out, err := db.GetItem(ctx, table, key("every", "kind"))
	require.NoError(t, err)
	assert.True(t, abi.ItemsEqual(in, out), "stored item differs:\n in %#v\nout %#v", in, out)

	missing, err := db.GetItem(ctx, table, key("no", "such"))
	require.NoError(t, err)
	assert.Nil(t, missing)
	assert.Equal(t, int64(1), db.Counts()["PutItem"])
	assert.Equal(t, int64(2), db.Counts()["GetItem"])
}

func TestDynamo_ConditionFailedWrapsSentinelAndOriginal(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	put := store.Put{Table: table, Item: key("a", "1"), Cond: &store.Cond{Expr: "attribute_not_exists(#pk)", Names: map[string]string{"#pk": "pk"}}}
	require.NoError(t, db.PutItem(ctx, put))
	err := db.PutItem(ctx, put)
	require.ErrorIs(t, err, store.ErrConditionFailed)
	var ccf *types.ConditionalCheckFailedException
	assert.True(t, errors.As(err, &ccf), "original SDK error still wrapped: %v", err)

	err = db.DeleteItem(ctx, store.Delete{Table: table, Key: key("a", "1"),
		Cond: &store.Cond{Expr: "#v = :v", Names: map[string]string{"#v": "v"}, Values: map[string]abi.Value{":v": abi.N("1")}}})
	require.ErrorIs(t, err, store.ErrConditionFailed)
	require.NoError(t, db.DeleteItem(ctx, store.Delete{Table: table, Key: key("a", "1")}))
}

func TestDynamo_UpdateItemReturnsItemAfterUpdate(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	got, err := db.UpdateItem(ctx, store.Update{Table: table, Key: key("u", "1"),
		Expr: "SET #n = :n", Names: map[string]string{"#n": "n"}, Values: map[string]abi.Value{":n": abi.N("5")},
		Cond: &store.Cond{Expr: "attribute_not_exists(#pk)", Names: map[string]string{"#pk": "pk"}}})
	require.NoError(t, err)
	assert.True(t, abi.ItemsEqual(abi.Item{"pk": abi.S("u"), "sk": abi.S("1"), "n": abi.N("5")}, got), "got %#v", got)
	_, err = db.UpdateItem(ctx, store.Update{Table: table, Key: key("u", "1"),
		Expr: "SET #n = :n", Names: map[string]string{"#n": "n"}, Values: map[string]abi.Value{":n": abi.N("6")},
		Cond: &store.Cond{Expr: "attribute_not_exists(#pk)", Names: map[string]string{"#pk": "pk"}}})
	require.ErrorIs(t, err, store.ErrConditionFailed)
}

func TestDynamo_TransactionCancelledReasonsInOrder(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: key("t", "2")}))
	notExists := &store.Cond{Expr: "attribute_not_exists(#pk)", Names: map[string]string{"#pk": "pk"}}
	err := db.TransactWriteItems(ctx, []store.Write{
		{Check: &store.Check{Table: table, Key: key("t", "2"), Cond: store.Cond{Expr: "attribute_exists(#pk)", Names: map[string]string{"#pk": "pk"}}}},
		{Put: &store.Put{Table: table, Item: key("t", "3"), Cond: notExists}},
		{Put: &store.Put{Table: table, Item: key("t", "5"), Cond: &store.Cond{Expr: "attribute_exists(#pk)", Names: map[string]string{"#pk": "pk"}}}},
	})
	require.Error(t, err)
	dynamotest.SkipIfUnsupported(t, err)
	var tx *store.TxCanceledError
	require.True(t, errors.As(err, &tx), "want *store.TxCanceledError, got %v", err)
	assert.Equal(t, []string{"None", "None", "ConditionalCheckFailed"}, tx.Reasons)
	assert.ErrorIs(t, err, store.ErrConditionFailed)
	var tce *types.TransactionCanceledException
	assert.True(t, errors.As(err, &tce), "original SDK error still wrapped")

	got, err := db.GetItem(ctx, table, key("t", "3"))
	require.NoError(t, err)
	assert.Nil(t, got, "a cancelled transaction writes nothing")
	require.NoError(t, db.TransactWriteItems(ctx, []store.Write{
		{Put: &store.Put{Table: table, Item: key("t", "3"), Cond: notExists}},
		{Delete: &store.Delete{Table: table, Key: key("t", "2")}},
	}))
	assert.Equal(t, int64(2), db.Counts()["TransactWriteItems"])
}

func TestDynamo_BatchGetItemChunksAndKeepsKeyOrder(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	const n = 230
	for i := 0; i < n; i += 2 { // only even items exist
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table,
			Item: abi.Item{"pk": abi.S("b"), "sk": abi.S(fmt.Sprintf("%04d", i)), "i": abi.N(fmt.Sprint(i))}}))
	}
	db.ResetCounts()
	keys := make([]abi.Item, 0, n+2)
	for i := n - 1; i >= 0; i-- { // reverse order
		keys = append(keys, key("b", fmt.Sprintf("%04d", i)))
	}
	keys = append(keys, key("b", "0004"), key("b", "0004")) // duplicates
	got, err := db.BatchGetItem(ctx, table, keys)
	require.NoError(t, err)
	require.Len(t, got, len(keys))
	for j, k := range keys {
		var i int
		fmt.Sscanf(k["sk"].Str, "%d", &i)
		if i%2 == 1 {
			assert.Nil(t, got[j], "key %d (%s) is absent", j, k["sk"].Str)
			continue
		}
		require.NotNil(t, got[j], "key %d (%s) exists", j, k["sk"].Str)
		assert.Equal(t, k["sk"].Str, got[j]["sk"].Str)
		assert.Equal(t, fmt.Sprint(i), got[j]["i"].Str)
	}
	// 230 distinct keys: ceil(230/100) = 3 requests (more only for unprocessed keys).
	assert.GreaterOrEqual(t, db.Counts()["BatchGetItem"], int64(3))
	empty, err := db.BatchGetItem(ctx, table, nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestDynamo_QueryPagesAndBackwards(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	for i := 1; i <= 7; i++ {
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: key("q", fmt.Sprintf("%02d", i))}))
	}
	q := store.Query{Table: table, KeyCond: "#pk = :pk AND #sk > :lo", Names: map[string]string{"#pk": "pk", "#sk": "sk"},
		Values: map[string]abi.Value{":pk": abi.S("q"), ":lo": abi.S("01")}, Limit: 4}
	var sks []string
	pages := 0
	for {
		page, err := db.Query(ctx, q)
		require.NoError(t, err)
		pages++
		for _, it := range page.Items {
			sks = append(sks, it["sk"].Str)
		}
		if page.LastKey == nil {
			break
		}
		q.StartKey = page.LastKey
	}
	assert.Equal(t, []string{"02", "03", "04", "05", "06", "07"}, sks)
	assert.GreaterOrEqual(t, pages, 2)
	assert.Equal(t, int64(pages), db.Counts()["Query"])

	back, err := db.Query(ctx, store.Query{Table: table, KeyCond: "#pk = :pk", Names: map[string]string{"#pk": "pk"},
		Values: map[string]abi.Value{":pk": abi.S("q")}, Limit: 1, Backwards: true})
	require.NoError(t, err)
	require.Len(t, back.Items, 1)
	assert.Equal(t, "07", back.Items[0]["sk"].Str)
}
