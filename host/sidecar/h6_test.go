package sidecar_test

import (
	"context"
	"log/slog"
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
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// One poison record in a batch, under bisect and three retries: the log
// has one warning for it (its first failure, saying after which attempt
// it will be given up) and one error (given up), where every retry warned
// again.
func TestC4_OnePoisonRecordUnderBisectLogsOneWarning(t *testing.T) {
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 3
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50,
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 3)
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	appendAdds(t, h, "c", 0, 3)
	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, nil))))
	e.waitRows(t, map[string]string{"a": foldLog(3), "c": foldLog(3)}, time.Minute)
	es := waitEntries(t, qfile, 1)
	require.NoError(t, stop(nil))
	require.Len(t, es, 1)
	assert.Equal(t, retries+1, es[0].Attempts)

	out := logs.String()
	var warns []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=WARN") {
			warns = append(warns, l)
		}
	}
	require.Len(t, warns, 1, "log:\n%s", out)
	assert.Contains(t, warns[0], "record failed; it is delivered again")
	assert.Contains(t, warns[0], "sequenceNumber="+es[0].Record.DynamoDB.SequenceNumber)
	assert.NotContains(t, warns[0], "hint=", "a record that will be set aside needs no hint")
	assert.Contains(t, warns[0], `givenUp="after attempt 4 (maxRetries 3; 3 more), to its onFailure destination`, "when the shard stops waiting")
	assert.Equal(t, 1, strings.Count(out, "level=ERROR"), "log:\n%s", out)
	assert.Contains(t, out, "record given up")
}

// Without an on-failure destination a failing record is retried until it
// succeeds and its shard waits: the first warning says so, and what to
// configure to set such records aside.
func TestC4_ARecordNoPolicyCanSetAsideWarnsWhatToDo(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 2)
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, nil))))
	e.waitRows(t, map[string]string{"a": foldLog(2)}, time.Minute)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(logs.String(), "level=WARN") {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))
	var warns []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			warns = append(warns, l)
		}
	}
	require.NotEmpty(t, warns, "log:\n%s", logs.String())
	assert.Contains(t, warns[0], "record failed; it is delivered again")
	assert.Contains(t, warns[0], "its shard waits behind it")
	assert.Contains(t, warns[0], "set sidecar.failure (maxRetries and onFailure)")
	assert.NotContains(t, logs.String(), "record given up")
}
