//go:build !noddblocal

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
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

func localSetup(t *testing.T) (*ddblocal.Server, *dynamo.DB, string) {
	t.Helper()
	srv := dynamotest.Local(t, ddblocal.Options{})
	db := dynamo.New(dynamotest.ClientAt(t, srv.Endpoint()))
	table := dynamotest.CreateTable(t, db.Client(), "faults")
	db.ResetCounts()
	return srv, db, table
}

func TestDynamo_BatchGetRetriesUnprocessedKeysAndCountsEveryRequest(t *testing.T) {
	srv, db, table := localSetup(t)
	ctx := context.Background()
	const n = 150
	keys := make([]abi.Item, n)
	for i := range keys {
		keys[i] = key("u", fmt.Sprintf("%03d", i))
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("u"), "sk": abi.S(fmt.Sprintf("%03d", i)), "i": abi.N(fmt.Sprint(i))}}))
	}
	db.ResetCounts()
	srv.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"BatchGetItem": {ddblocal.FaultUnprocessed: 0.5}}, Seed: 7})
	got, err := db.BatchGetItem(ctx, table, keys)
	require.NoError(t, err)
	for i, it := range got {
		require.NotNil(t, it, "key %d", i)
		assert.Equal(t, fmt.Sprint(i), it["i"].Str)
	}
	assert.Greater(t, db.Counts()["BatchGetItem"], int64(2), "rounds for unprocessed keys are counted as requests")
}

func TestDynamo_ThrottlingAfterSDKRetriesIsErrThrottled(t *testing.T) {
	srv, db, table := localSetup(t)
	ctx := context.Background()
	srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
		{Op: "GetItem", Code: ddblocal.FaultThroughput}, {Op: "GetItem", Code: ddblocal.FaultThroughput},
		{Op: "GetItem", Code: ddblocal.FaultThroughput}, {Op: "GetItem", Code: ddblocal.FaultThroughput},
	}})
	_, err := db.GetItem(ctx, table, key("a", "b"))
	require.ErrorIs(t, err, store.ErrThrottled)
	var pte *types.ProvisionedThroughputExceededException
	assert.True(t, errors.As(err, &pte), "original error wrapped: %v", err)
	assert.Equal(t, int64(4), db.Counts()["GetItem"], "the SDK's four attempts (DynamoDB's default) are four requests")

	// One throttle, then success: the SDK's retry hides it.
	srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "PutItem", Code: ddblocal.FaultThrottling}}})
	db.ResetCounts()
	require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: key("a", "b")}))
	assert.Equal(t, int64(2), db.Counts()["PutItem"])
}

func TestDynamo_TransactionConflictMatchesErrConflict(t *testing.T) {
	srv, db, table := localSetup(t)
	srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "TransactWriteItems", Code: ddblocal.FaultTransactionConflict}}})
	err := db.TransactWriteItems(context.Background(), []store.Write{{Put: &store.Put{Table: table, Item: key("c", "1")}}})
	require.ErrorIs(t, err, store.ErrConflict)
	var tx *store.TxCanceledError
	require.True(t, errors.As(err, &tx))
	assert.Equal(t, "TransactionConflict", tx.Reasons[0])
	assert.NotErrorIs(t, err, store.ErrConditionFailed)
}

// TestX1_ThrottledAttemptsAreCountedEvenWhenTheRetrySucceeds: DynamoDB
// throttles a PutItem twice and then takes it; the call succeeds, and the
// two refused attempts are counted by operation (on the wire path and
// through the SDK alike), where only the time spent showed them.
func TestX1_ThrottledAttemptsAreCountedEvenWhenTheRetrySucceeds(t *testing.T) {
	srv := dynamotest.Local(t, ddblocal.Options{})
	client := dynamotest.ClientAt(t, srv.Endpoint())
	for name, db := range map[string]*dynamo.DB{"wire": dynamo.New(client), "sdk": dynamo.NewSDK(client)} {
		t.Run(name, func(t *testing.T) {
			table := dynamotest.CreateTable(t, db.Client(), "throttled-"+name)
			srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
				{Op: "PutItem", Code: ddblocal.FaultThroughput}, {Op: "PutItem", Code: ddblocal.FaultThrottling},
			}})
			require.NoError(t, db.PutItem(context.Background(), store.Put{Table: table, Item: key("a", "b")}))
			assert.Equal(t, map[string]int64{"PutItem": 2}, db.Throttled())
			assert.Equal(t, int64(3), db.Counts()["PutItem"], "three attempts sent")
			db.ResetCounts()
			assert.Empty(t, db.Throttled())
		})
	}
}
