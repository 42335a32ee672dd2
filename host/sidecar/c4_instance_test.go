package sidecar_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// A row fed by three stream instances is written with s1's event while
// s2's evolve fails (s3's event is skipped): the row has no error, s2 alone failed. Its record is
// charged to the projection, with s2's error as the reason, so the
// projection's own onFailure gives it up (only projections.<p>.onFailure
// is configured; the default policy has no destination and would retry it
// forever). Bisection is off: it would split the batch until s2's record
// is alone, where s2 is the row's only instance and fails the row.
func TestC4_AFailedInstanceOfAWrittenRowIsChargedToItsProjection(t *testing.T) {
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	zero, no := 0, false
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{BatchSize: 50,
		Failure:     host.FailurePolicyConfig{BisectOnError: &no},
		Projections: map[string]host.FailurePolicyConfig{projection: {MaxRetries: &zero, BisectOnError: &no, OnFailure: &host.OnFailureConfig{File: qfile}}}})
	e.cfg.Projections[0].Checkpoint = host.CheckpointConfig{Map: "cps"}
	e.cfg.Projections[0].Revision = &host.RevisionConfig{Field: "rev"}
	h := e.host(t, &testlogic.Ledger{})
	ctx := context.Background()
	// s2's record first: every redelivery from it brings s1's (applied,
	// then already applied) and s3's (skipped, decided again each time),
	// so the row itself never fails.
	_, err := h.Append(ctx, testlogic.Stream, "s2", 0, host.NewEvent{Type: "Fail", Data: abi.Item{"row": abi.S("x")}})
	require.NoError(t, err)
	_, err = h.Append(ctx, testlogic.Stream, "s1", 0, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("5"), "row": abi.S("x")}})
	require.NoError(t, err)
	_, err = h.Append(ctx, testlogic.Stream, "s3", 0, host.NewEvent{Type: "Skip", Data: abi.Item{"row": abi.S("x")}})
	require.NoError(t, err)
	var spans []span
	var mu sync.Mutex
	obs := newRecorder("w1", &spans, &mu)
	stop := run(e.reader(t, h, "w1", obs))
	e.waitRows(t, map[string]string{"x": "1"}, 10*time.Second)
	deadline := time.Now().Add(time.Minute)
	var es []quarantine.Entry
	for time.Now().Before(deadline) {
		if es, _ = quarantine.ReadFile(qfile); len(es) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))

	require.Len(t, es, 1, "s2's record is given up to the projection's destination")
	q := es[0]
	assert.Equal(t, projection, q.Projection)
	assert.Equal(t, "s2", q.Record.DynamoDB.NewImage["streamId"].Str)
	assert.Contains(t, q.Reason, "Boom", "the instance's own error")
	assert.Contains(t, q.Reason, "Acct#s2")
	assert.NotContains(t, q.Reason, "reported failed")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.given, 1)
	assert.True(t, strings.HasPrefix(obs.given[0], projection+"|"), "charged to the projection, not to none: %s", obs.given[0])
	assert.Equal(t, "5", e.Get(t, e.cfg.Projections[0].Table, testlogic.RowKey("x"))["total"].Str, "s1's event is written")
}
