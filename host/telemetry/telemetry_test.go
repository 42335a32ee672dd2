package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

// Metrics is what the change-feed reader reports to. The assertion lives
// in a test so that the reader's package may import telemetry.
var _ sidecar.Observer = (*telemetry.Metrics)(nil)

// A real batch through ProcessBatch against ddblocal: the observer counts
// the applied events (the gap-filled one included), the rows written and
// failed, the failed records, the gap read, the plugin calls, and the
// plugin serving the projection.
func TestX1_ObserverCountsARealBatch(t *testing.T) {
	ctx := context.Background()
	m := telemetry.New(telemetry.Options{})
	f := opstest.Start(t, "", host.WithCallObserver(m.PluginCall))
	m.ServePlugins(f.Host)
	a := f.Append(t, "a", 0, opstest.Add(1), opstest.Add(2), opstest.Add(3))
	b := f.Append(t, "b", 0, opstest.Add(5), opstest.Fail())
	batch := []host.Record{a[0], a[2], b[0], b[1]} // a's version 2 is missing: a gap read
	start := time.Now()
	res, err := f.Host.ProcessBatch(ctx, batch)
	require.NoError(t, err)
	m.BatchProcessed("Acct", "shard-1", res, time.Since(start), nil)
	m.BatchProcessed("Acct", "shard-1", nil, time.Millisecond, errors.New("whole batch failed"))

	want := map[string]float64{
		"dynafold_events_applied_total": 3, "dynafold_rows_written_total": 1, "dynafold_rows_failed_total": 1,
		"dynafold_gap_reads_total": 1, "dynafold_gap_filled_events_total": 1, "dynafold_write_retries_total": 0,
		"dynafold_conflicts_total": 0,
	}
	for name, v := range want {
		got, ok := value(t, m, name, map[string]string{"projection": "ledger"})
		assert.True(t, ok, name)
		assert.Equal(t, v, got, name)
	}
	failed, _ := value(t, m, "dynafold_records_failed_total", map[string]string{"stream": "Acct"})
	assert.Equal(t, float64(len(res.Failed())), failed)
	assert.NotZero(t, failed, "the failed row's records are reported")
	ok, _ := value(t, m, "dynafold_batches_total", map[string]string{"stream": "Acct", "result": "ok"})
	bad, _ := value(t, m, "dynafold_batches_total", map[string]string{"stream": "Acct", "result": "error"})
	assert.Equal(t, []float64{1, 1}, []float64{ok, bad})
	calls, found := value(t, m, "dynafold_plugin_call_duration_seconds", map[string]string{"projection": "ledger", "function": "evolve"})
	require.True(t, found, "evolve calls are timed")
	assert.Equal(t, float64(f.Ledger.EvolveCalls.Load()), calls)
	info, found := value(t, m, "dynafold_plugin_info", map[string]string{"projection": "ledger", "plugin": "ledger@1.0.0"})
	assert.True(t, found)
	assert.Equal(t, 1.0, info)
}

// Lost write races count as retries and, when every attempt is lost, as a
// conflict; a new row's write without a read that found the row there is
// counted apart, not as a race; Count works on a hand-made result too.
func TestX1_CountRetriesAndConflicts(t *testing.T) {
	pr := host.ProjectionResult{Rows: []host.Outcome{
		{Written: true, Attempts: 3, Instances: []host.Instance{{}}},
		{Attempts: 4, Err: host.ErrConcurrentModification},
		{Attempts: 1, Err: errors.New("plugin trapped")},
		{Written: true, Attempts: 3, Existed: true, Instances: []host.Instance{{}}},
	}}
	c := (&host.Result{Projections: map[string]host.ProjectionResult{"p": pr}}).Counts("p")
	assert.Equal(t, host.Counts{RowsWritten: 2, RowsFailed: 2, Retries: 6, Conflicts: 1, NewRowsExisting: 1}, c)
	assert.Equal(t, host.Counts{}, (&host.Result{}).Counts("other"))
}

// Shard reads, leases and given-up records feed the gauges and the status:
// the lag grows while a shard is not read, the owner is this worker for
// the leases it holds, and only the last N failures are kept, newest first.
func TestX1_StatusShowsShardsLeasesAndRecentFailures(t *testing.T) {
	now := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	m := telemetry.New(telemetry.Options{RecentFailures: 2, Now: func() time.Time { return now }})
	m.ShardRead("Acct", "shard-1", 7, 3*time.Second)
	m.ShardRead("Acct", "shard-2", 0, 0)
	m.LeasesHeld("w1", "Acct", []string{"shard-1", "shard-3"}, 3)
	assert.False(t, telemetry.New(telemetry.Options{}).LeaseRoundDone())
	assert.True(t, m.LeaseRoundDone())
	now = now.Add(2 * time.Second)
	for _, seq := range []string{"1", "2", "3"} {
		m.RecordGivenUp("ledger", "Acct", "shard-1", host.Record{DynamoDB: host.StreamRecord{SequenceNumber: seq}}, "boom "+seq)
	}
	st := m.Status()
	require.Len(t, st.Shards, 2, "shard-2, read but not held (its lease another worker's), is not listed")
	assert.Equal(t, telemetry.Shard{Stream: "Acct", Shard: "shard-1", Owner: "w1", Behind: 3 * time.Second, Lag: 5 * time.Second,
		LastRead: now.Add(-2 * time.Second), Records: 7}, st.Shards[0])
	assert.Equal(t, "shard-3", st.Shards[1].Shard, "a held shard not read yet is listed")
	require.Len(t, st.Failures, 2)
	assert.Equal(t, []string{"3", "2"}, []string{st.Failures[0].Identifier, st.Failures[1].Identifier})
	lag, _ := value(t, m, "dynafold_shard_lag_seconds", map[string]string{"shard": "shard-1"})
	assert.Equal(t, 5.0, lag)
	held, _ := value(t, m, "dynafold_leases_held", map[string]string{"worker": "w1", "stream": "Acct"})
	total, _ := value(t, m, "dynafold_shards", map[string]string{"stream": "Acct"})
	assert.Equal(t, []float64{2, 3}, []float64{held, total})
	given, _ := value(t, m, "dynafold_records_given_up_total", map[string]string{"projection": "ledger"})
	assert.Equal(t, 3.0, given)
	read, _ := value(t, m, "dynafold_records_read_total", map[string]string{"stream": "Acct"})
	assert.Equal(t, 7.0, read)
}
