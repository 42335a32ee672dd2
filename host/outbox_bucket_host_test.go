package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// outbox.indexBuckets reaches the engine, the index `host tables create`
// makes serves the buckets, and drain-pending finds every row's effects.
func TestO5_TablesCreateMakesTheIndexTheBucketsUse(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "ledger_rows",
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "LedgerRow"},
	    "outbox": {"index": "pending", "indexBuckets": 4}}]}`, events, testlogic.Stream))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 1)), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	_, err = h.CreateTables(ctx)
	require.NoError(t, err)
	for i := range 20 {
		evs, err := h.Append(ctx, testlogic.Stream, fmt.Sprint("r", i), 0, add(1))
		require.NoError(t, err)
		res, err := h.ApplyEvents(ctx, "ledger", evs...)
		require.NoError(t, err)
		require.Equal(t, 1, res.Rows[0].Enqueued)
	}

	out, err := env.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("ledger_rows"), IndexName: aws.String("pending")})
	require.NoError(t, err)
	buckets := map[string]int{}
	for _, it := range out.Items {
		buckets[it["__edd_ob_pk"].(*types.AttributeValueMemberS).Value]++
	}
	assert.Len(t, buckets, 4, "20 rows over 4 buckets fill each: %v", buckets)
	for b := range buckets {
		assert.Contains(t, []string{"ledger#0", "ledger#1", "ledger#2", "ledger#3"}, b)
	}
	var n atomic.Int64 // rows drain at once
	reps, err := h.DrainPending(ctx, "ledger", deliver.Func(func(context.Context, deliver.Effect) error { n.Add(1); return nil }))
	require.NoError(t, err)
	assert.Len(t, reps, 20)
	assert.Equal(t, int64(20), n.Load())
}

func TestO5_IndexBucketsOutOfRangeAreRefused(t *testing.T) {
	for _, tc := range []struct{ outbox, want string }{
		{`{"index": "pending", "indexBuckets": -1}`, `projection "ledger".outbox.indexBuckets: -1 is out of range`},
		{`{"index": "pending", "indexBuckets": 1001}`, `projection "ledger".outbox.indexBuckets: 1001 is out of range`},
		{`{"indexBuckets": 8}`, `projection "ledger".outbox.indexBuckets is set but outbox.index is not`},
	} {
		_, err := host.ParseConfig(fmt.Appendf(nil, `{
		  "eventStore": {"table": "events", "schema": "test", "streams": [{"name": "Acct", "composite": ["acctId"]}]},
		  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "rows",
		    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"}, "outbox": %s}]}`, tc.outbox))
		if assert.Error(t, err, tc.outbox) {
			assert.True(t, strings.Contains(err.Error(), tc.want), "%s: %v", tc.outbox, err)
		}
	}
}
