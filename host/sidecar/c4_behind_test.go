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
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// One event its plugin fails (terminal does not accept it), and five more
// events of the same row after it: the first is retried and given up as
// its policy says; each later record fails behind that event (the row's
// checkpoint stays below it) and is given up at its first failure, to the
// same destination, rather than retried while its shard waits. The other
// rows of the shard are folded.
func TestC4_RecordsBehindAGivenUpEventAreGivenUpAtOnce(t *testing.T) {
	defer sidecar.SetRetryDelay(time.Millisecond)()
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 3
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 2,
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "bad", 0, 1)
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 1, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	appendAdds(t, h, "bad", 2, 5)
	appendAdds(t, h, "a", 0, 3)

	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, nil))))
	e.waitRows(t, map[string]string{"a": foldLog(3), "bad": foldLog(1)}, time.Minute)
	es := waitEntries(t, qfile, 6)
	require.NoError(t, stop(nil))
	require.Len(t, es, 6, "the failing event and the five behind it; log:\n%s", logs.String())
	for i, en := range es {
		want := 1
		if i == 0 {
			want = retries + 1
		}
		assert.Equal(t, want, en.Attempts, "entry %d (%s)", i, en.Record.DynamoDB.SequenceNumber)
		assert.Contains(t, en.Reason, "bad v2 (Fail)", "each fails on the same event")
	}
	assert.Equal(t, 5, strings.Count(logs.String(), "givenUpAtOnce="), "log:\n%s", logs.String())
}
