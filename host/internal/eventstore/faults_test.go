//go:build !noddblocal

package eventstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// TestES2_TransactionConflictIsRetriedUntilAConditionDecides: a transaction
// cancelled by a concurrent one (TransactionConflict) has an unknown outcome,
// so the append is tried again; the conditions make the retry safe.
func TestES2_TransactionConflictIsRetriedUntilAConditionDecides(t *testing.T) {
	srv := dynamotest.Local(t, ddblocal.Options{})
	db := dynamo.New(dynamotest.ClientAt(t, srv.Endpoint()))
	table := dynamotest.CreateTable(t, db.Client(), "events")
	es, err := eventstore.New(db, table, eventstore.DefaultLayout("shop", 1), eventstore.WithClock(func() time.Time { return fixedNow }))
	require.NoError(t, err)
	ctx := context.Background()
	db.ResetCounts()

	srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "TransactWriteItems", Code: ddblocal.FaultTransactionConflict}}})
	got, err := es.Append(ctx, orderStream, "O-1", 0, placed("c"))
	require.NoError(t, err)
	assert.Len(t, got, 1)
	assert.Equal(t, int64(2), db.Counts()["TransactWriteItems"])

	// Conflicts on every try: the error says so and is not a version conflict.
	script := make([]ddblocal.ScriptedFault, 10)
	for i := range script {
		script[i] = ddblocal.ScriptedFault{Op: "TransactWriteItems", Code: ddblocal.FaultTransactionConflict}
	}
	srv.SetFaults(ddblocal.FaultConfig{Script: script})
	_, err = es.Append(ctx, orderStream, "O-1", 1, added("A", "1"))
	require.ErrorIs(t, err, store.ErrConflict)
	assert.NotErrorIs(t, err, eventstore.ErrVersionConflict)
	srv.SetFaults(ddblocal.FaultConfig{})
	head, err := es.Head(ctx, orderStream, "O-1")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head)
}
