package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

// Events the plugin rejects (its terminal accepting them) and skips are
// counted per projection, and in the status page's counters with the
// records read, rows written, failures and records given up.
func TestX1_EventsRejectedAndSkippedAreCounted(t *testing.T) {
	ctx := context.Background()
	m := telemetry.New(telemetry.Options{})
	f := opstest.Start(t, "")
	recs := f.Append(t, "a", 0, opstest.Add(1), abi.Item{"_tag": abi.S("Skip")}, abi.Item{"_tag": abi.S("Reject")},
		abi.Item{"_tag": abi.S("Reject")}, opstest.Add(2))
	recs = append(recs, f.Append(t, "b", 0, opstest.Fail())...)
	m.ShardRead("Acct", "shard-1", len(recs), 0)
	res, err := f.Host.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	m.BatchProcessed("Acct", "shard-1", res, time.Millisecond, nil)
	m.RecordGivenUp("ledger", "Acct", "shard-1", recs[5], "boom")

	rejected, ok := value(t, m, "dynafold_events_rejected_total", map[string]string{"projection": "ledger"})
	require.True(t, ok, "dynafold_events_rejected_total is served")
	assert.Equal(t, 2.0, rejected)
	skipped, ok := value(t, m, "dynafold_events_skipped_total", map[string]string{"projection": "ledger"})
	require.True(t, ok, "dynafold_events_skipped_total is served")
	assert.Equal(t, 1.0, skipped)
	assert.Equal(t, telemetry.Counters{RecordsRead: 6, RowsWritten: 1, EventsApplied: 2, EventsRejected: 2, EventsSkipped: 1,
		Failures: int64(len(res.Failed())), GivenUp: 1}, m.Status().Counters)
	assert.Equal(t, int64(1), m.Status().Counters.Failures, "b's failed row")
	require.Len(t, m.Status().Failures, 1)
	assert.NotEmpty(t, m.Status().Failures[0].EntryID, "the quarantine entry the record would have")
}

var _ telemetry.SwapSource = (*host.Host)(nil)
