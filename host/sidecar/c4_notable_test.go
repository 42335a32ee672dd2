package sidecar_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// A rows table deleted under a running reader whose policy gives records
// up after 3 retries: the records that fail on it are not the records'
// fault, so none is given up or counted against its retries however often
// it is delivered again; one warning names the table and `host tables
// create`, and once the table is back the records are folded.
func TestC4_ARecordFailingOnAMissingTableWaitsForIt(t *testing.T) {
	defer sidecar.SetRetryDelay(time.Millisecond)()
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 3
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 2)

	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, nil))))
	e.waitRows(t, map[string]string{"a": foldLog(2)}, time.Minute)

	rows := e.cfg.Projections[0].Table
	_, err := e.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(rows)})
	require.NoError(t, err)
	appendAdds(t, h, "a", 2, 3)
	const warning = "a table the projections read or write does not exist"
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), warning) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // hundreds of 1ms retries: past maxRetries many times over
	es, _ := quarantine.ReadFile(qfile)
	assert.Empty(t, es, "no record is given up for a missing table")
	assert.Equal(t, 1, strings.Count(logs.String(), warning), "one warning; log:\n%s", logs.String())
	assert.Contains(t, logs.String(), "tables=["+rows+"]")
	assert.Contains(t, logs.String(), "host tables create")

	_, err = h.CreateTables(context.Background())
	require.NoError(t, err)
	e.waitRows(t, map[string]string{"a": foldLog(5)}, time.Minute)
	require.NoError(t, stop(nil))
	es, _ = quarantine.ReadFile(qfile)
	assert.Empty(t, es)
	assert.Contains(t, logs.String(), "answers again")
}
