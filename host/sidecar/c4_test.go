package sidecar_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// flaky is the Ledger failing the first `times` evolve calls that fold an
// event of stream instance id.
type flaky struct {
	*testlogic.Ledger
	id    string
	times int64
	calls atomic.Int64
}

func (f *flaky) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	if req.StreamID == f.id && f.calls.Add(1) <= f.times {
		return &abi.EvolveResponse{Decisions: []abi.Decision{{Outcome: abi.Failed, Error: &abi.Error{Tag: "Flaky", Message: "not yet"}}}}, nil
	}
	return f.Ledger.Evolve(ctx, req)
}

func TestC2_PartialFailureRewindsToTheLowestFailedRecordAndRedeliversTheRest(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50}) // every record in one batch
	l := &flaky{Ledger: &testlogic.Ledger{}, id: "b", times: 2}
	h := e.host(t, l)
	appendAdds(t, h, "a", 0, 3)
	appendAdds(t, h, "b", 0, 2) // fails twice, then folds
	appendAdds(t, h, "c", 0, 3)
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	stop := run(e.reader(t, h, "w1", obs, func(s *host.SidecarConfig) { f := false; s.Failure.BisectOnError = &f }))
	e.waitRows(t, map[string]string{"a": foldLog(3), "b": foldLog(2), "c": foldLog(3)}, 10*time.Second)
	require.NoError(t, stop(nil))

	assert.Equal(t, int64(3), l.calls.Load(), "b's row: two failed deliveries, then the one that folded")
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(spans), 3)
	// the first delivery had all 8 records; each redelivery starts at b's
	// first record (the lowest failed): its 2 records and c's 3
	assert.Equal(t, 8, spans[0].records)
	assert.Equal(t, 5, spans[1].records, "redelivered from the lowest failed record")
	assert.Equal(t, 5, spans[2].records)
	ls := e.leases(t)
	require.Len(t, ls, 1)
	for _, lr := range ls {
		assert.NotEqual(t, "TRIM_HORIZON", lr.checkpoint)
	}
}

func TestC4_RecordGivenUpAfterMaxRetriesGoesToTheQuarantineAndTheShardMovesOn(t *testing.T) {
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	retries := 2
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{BatchSize: 50,
		Projections: map[string]host.FailurePolicyConfig{projection: {MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}}})
	h := e.host(t, &testlogic.Ledger{})
	ctx := context.Background()
	appendAdds(t, h, "a", 0, 2)
	_, err := h.Append(ctx, testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	appendAdds(t, h, "c", 0, 2)
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	stop := run(e.reader(t, h, "w1", obs))
	e.waitRows(t, map[string]string{"a": foldLog(2), "c": foldLog(2)}, 10*time.Second)
	deadline := time.Now().Add(time.Minute)
	for {
		obs.mu.Lock()
		n := len(obs.given)
		obs.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))

	es, err := quarantine.ReadFile(qfile)
	require.NoError(t, err)
	require.Len(t, es, 1, "one record given up")
	q := es[0]
	assert.Equal(t, projection, q.Projection)
	assert.Equal(t, retries+1, q.Attempts, "the first delivery and maxRetries retries")
	assert.Equal(t, "bad", q.Record.DynamoDB.NewImage["streamId"].Str, "the failing record itself")
	assert.Contains(t, q.Reason, "Boom")
	assert.False(t, q.FirstSeen.IsZero())
	assert.NotEmpty(t, q.Shard)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.given, 1)
	assert.True(t, strings.HasPrefix(obs.given[0], projection+"|"+q.Record.DynamoDB.SequenceNumber+"|"))
	assert.Empty(t, e.rowLog(t, "bad"))
	// its shard moved past it
	assert.Greater(t, e.leases(t)[q.Shard].checkpoint, q.Record.DynamoDB.SequenceNumber)
}

func TestC4_BisectIsolatesTheFailingRecordOfARow(t *testing.T) {
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	zero := 0
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{BatchSize: 50,
		Failure: host.FailurePolicyConfig{MaxRetries: &zero, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, &testlogic.Ledger{})
	ctx := context.Background()
	// one row: an Add that folds, then a Fail, in one batch
	_, err := h.Append(ctx, testlogic.Stream, "r", 0, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("5")}},
		host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	appendAdds(t, h, "z", 0, 2)
	var spans []span
	var mu sync.Mutex
	stop := run(e.reader(t, h, "w1", newRecorder("w1", &spans, &mu)))
	e.waitRows(t, map[string]string{"r": "1", "z": foldLog(2)}, 10*time.Second)
	deadline := time.Now().Add(time.Minute)
	var es []quarantine.Entry
	for time.Now().Before(deadline) {
		if es, _ = quarantine.ReadFile(qfile); len(es) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))
	require.Len(t, es, 1)
	assert.Equal(t, "Fail", es[0].Record.DynamoDB.NewImage["eventType"].Str, "the Fail event was isolated, not the Add before it: %+v", es[0].Record.DynamoDB.NewImage)
	assert.Equal(t, 1, es[0].Attempts)
}

func TestC4_MaxRecordAgeGivesUpARecordOlderThanIt(t *testing.T) {
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	forever := -1
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{
		Failure: host.FailurePolicyConfig{MaxRetries: &forever, MaxRecordAge: host.Duration(time.Minute), OnFailure: &host.OnFailureConfig{File: qfile}}})
	// The record is young until it failed twice, then the reader's clock
	// jumps past maxRecordAge: the test forces the age instead of waiting
	// for it (a loaded machine could take longer than the age to deliver
	// the record once).
	var tries atomic.Int64
	h := e.host(t, &testlogic.Ledger{OnEvolve: func(req *abi.EvolveRequest) {
		if req.StreamID == "bad" {
			tries.Add(1)
		}
	}})
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	r := e.reader(t, h, "w1", obs)
	var jumped atomic.Bool
	sidecar.SetAgeClock(r, func() time.Time {
		if tries.Load() >= 2 {
			jumped.Store(true)
			return time.Now().Add(time.Hour)
		}
		return time.Now()
	})
	stop := run(r)
	deadline := time.Now().Add(time.Minute)
	var es []quarantine.Entry
	for time.Now().Before(deadline) {
		if es, _ = quarantine.ReadFile(qfile); len(es) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, stop(nil))
	require.Len(t, es, 1)
	assert.Greater(t, es[0].Attempts, 1, "retried while younger than maxRecordAge")
	assert.True(t, jumped.Load(), "given up only once older than maxRecordAge (retries are unlimited)")
}

func TestC4_TrimmedDataStopsUnderStopAndFlagsARebuildUnderContinue(t *testing.T) {
	for _, policy := range []string{host.TrimmedStop, host.TrimmedContinue} {
		t.Run(policy, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.jsonl")
			e := start(t, ddblocal.StreamOptions{Shards: 1, Retention: time.Minute}, host.SidecarConfig{OnTrimmed: policy, StateFile: state, BatchSize: 2})
			h := e.host(t, &testlogic.Ledger{})
			appendAdds(t, h, "a", 0, 2)
			var spans []span
			var mu sync.Mutex
			stop := run(e.reader(t, h, "w1", newRecorder("w1", &spans, &mu)))
			e.waitRows(t, map[string]string{"a": foldLog(2)}, 10*time.Second)
			require.NoError(t, stop(nil))
			appendAdds(t, h, "lost", 0, 3)
			e.clock.Jump(2 * time.Minute) // passes retention unread

			r := e.reader(t, h, "w2", newRecorder("w2", &spans, &mu))
			if policy == host.TrimmedStop {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err := r.Run(ctx)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "trimmed")
				assert.Contains(t, err.Error(), "onTrimmed")
				_, statErr := os.Stat(state)
				assert.True(t, os.IsNotExist(statErr), "nothing flagged under stop")
				return
			}
			stop = run(r)
			appendAdds(t, h, "after", 0, 2)
			e.waitRows(t, map[string]string{"after": foldLog(2)}, 10*time.Second)
			require.NoError(t, stop(nil))
			b, err := os.ReadFile(state)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"projections":["`+projection+`"]`)
			assert.Contains(t, string(b), `"action":"rebuild"`)
			assert.Empty(t, e.rowLog(t, "lost"), "the lost records were not read")
		})
	}
}

var _ = fmt.Sprint

// Without an on-failure destination nothing is given up: a failing record
// is delivered again and again (its shard waits, later records with it),
// and folds once the cause is gone — it is never lost.
func TestC4_WithoutADestinationAFailingRecordIsRetriedUntilItFolds(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{BatchSize: 50})
	l := &flaky{Ledger: &testlogic.Ledger{}, id: "b", times: 8} // far past the default of 3 retries
	h := e.host(t, l)
	appendAdds(t, h, "a", 0, 2)
	appendAdds(t, h, "b", 0, 2)
	appendAdds(t, h, "c", 0, 2)
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	stop := run(e.reader(t, h, "w1", obs, func(s *host.SidecarConfig) { f := false; s.Failure.BisectOnError = &f }))
	e.waitRows(t, map[string]string{"a": foldLog(2), "b": foldLog(2), "c": foldLog(2)}, 30*time.Second)
	require.NoError(t, stop(nil))
	assert.Equal(t, int64(9), l.calls.Load(), "eight failed deliveries of b's row, then the one that folded")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Empty(t, obs.given, "nothing given up without a destination")
}
