package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
)

// TestX1_HostCountsTheThrottledRequestsItsClientRetried: DynamoDB
// throttles the row's write once; the batch succeeds (the client retried
// it), and Host.ThrottledRequests says it was throttled, by operation.
func TestX1_HostCountsTheThrottledRequestsItsClientRetried(t *testing.T) {
	ctx := context.Background()
	h, env, _, rows := stockHost(t, "")
	evs, err := h.Append(ctx, "Warehouse", "g-1", 0, host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("2")}})
	require.NoError(t, err)
	assert.Empty(t, h.ThrottledRequests())
	env.Server.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "PutItem", Code: ddblocal.FaultThroughput}}})
	res, err := h.ProcessBatch(ctx, lambdaFile(t, h.EventItem(evs[0])))
	require.NoError(t, err)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, "2", stockRow(t, env, rows, "g-1")["qty"].Str)
	assert.Equal(t, map[string]int64{"PutItem": 1}, h.ThrottledRequests())
}
