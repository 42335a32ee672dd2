package sidecar_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestC4_ARecordFailingOnAMisreadRowWaitsForTheConfiguration: workers
// restarted on a configuration whose checkpoint field is misspelled cannot
// read the rows they wrote: the failure is the configuration's, not the
// records', so under a failure policy nothing is given up (each record
// went to the quarantine within a second); one error says to fix the
// configuration, and the row is left as it was.
func TestC4_ARecordFailingOnAMisreadRowWaitsForTheConfiguration(t *testing.T) {
	defer sidecar.SetRetryDelay(time.Millisecond)()
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 1
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	e.cfg.Projections[0].WrittenBy = "writtenBy"
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 2)
	stop := run(e.reader(t, h, "w1", nil))
	e.waitRows(t, map[string]string{"a": foldLog(2)}, time.Minute)
	require.NoError(t, stop(nil))
	before := e.rowLog(t, "a")

	e.cfg.Projections[0].Checkpoint.Field = "_ver" // the restart's misspelled configuration
	typo := e.host(t, &testlogic.Ledger{})
	appendAdds(t, typo, "a", 2, 3)
	logs := &syncbuf.Buffer{}
	stop = run(e.readerLogging(t, typo, "w1", nil, slog.New(slog.NewTextHandler(logs, nil))))
	const line = "the configuration cannot read the projection's rows as its own"
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), line) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // many 1 ms retries: past maxRetries many times over
	require.NoError(t, stop(nil))
	es, _ := quarantine.ReadFile(qfile)
	assert.Empty(t, es, "no record is given up for the configuration's mistake")
	assert.Equal(t, 1, strings.Count(logs.String(), line), "one error; log:\n%s", logs.String())
	assert.Contains(t, logs.String(), "the row holds none of its checkpoint attributes")
	assert.Equal(t, before, e.rowLog(t, "a"), "the row is left as it was")
}
