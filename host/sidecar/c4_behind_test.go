package sidecar_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
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
	givenUpBehind(t, &testlogic.Ledger{}, "bad v2 (Fail)")
}

// givenUpBehind runs one shard whose row "bad" has an event of type Fail
// at v2 and five events after it, and row "a" three good ones, through l
// with maxRetries 3 and a file as the on-failure destination: it checks
// that "a" is folded, that the failing record is given up after all its
// attempts and the five behind it at their first, each for a reason that
// contains reason, with givenUpAtOnce logged for those five.
func givenUpBehind(t *testing.T, l logic.Logic, reason string) {
	t.Helper()
	defer sidecar.SetRetryDelay(time.Millisecond)()
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 3
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 2,
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, l)
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
		assert.Contains(t, en.Reason, reason, "each fails on the same event")
	}
	assert.Equal(t, 5, strings.Count(logs.String(), "givenUpAtOnce="), "log:\n%s", logs.String())
}

// trapsOnFail is the ledger whose plugin call traps (as a Wasm module that
// panics or loops to its timeout would) whenever it is handed an event of
// type Fail, where the ledger's evolve fails that event alone.
type trapsOnFail struct{ testlogic.Ledger }

func (l *trapsOnFail) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	for _, ev := range req.Events {
		if ev.Event.Type == "Fail" {
			return nil, fmt.Errorf("plugin ledger: evolve: %w: wasm error: unreachable", plugin.ErrTrap)
		}
	}
	return l.Ledger.Evolve(ctx, req)
}

// The same for a plugin whose call fails on its own (a trap; a loop to its
// timeout or loop budget alike): the records behind the first one given up
// start their row's fold from the same event with the same plugin, fail
// the same way, and are given up at their first failure. A call that only
// timed out by chance was retried in full for the first record.
func TestC4_RecordsBehindAPluginCallThatTrapsAreGivenUpAtOnce(t *testing.T) {
	givenUpBehind(t, &trapsOnFail{}, "wasm error: unreachable")
}

// growsOnFail is the ledger whose row's item grows past DynamoDB's 400 KB
// limit once it folds an event of type Fail (as a cart whose list of lines
// grew too long), where the ledger's evolve fails that event.
type growsOnFail struct{ testlogic.Ledger }

func (l *growsOnFail) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	big := false
	in := *req
	in.Events = slices.Clone(req.Events)
	for i, se := range in.Events {
		if se.Event.Type == "Fail" {
			big = true
			in.Events[i].Event.Type = "Same"
		}
	}
	resp, err := l.Ledger.Evolve(ctx, &in)
	if err == nil && big && resp.Item != nil {
		resp.Item["lines"] = abi.S(strings.Repeat("x", 410*1024))
	}
	return resp, err
}

// The same for a row whose item grew past DynamoDB's 400 KB limit: the
// same plugin version folding the row from the same checkpoint makes the
// same item, so each later record of the row is given up at its first
// failure rather than retried in full while the shard waits.
func TestC4_RecordsOfARowGrownTooLargeAreGivenUpAtOnce(t *testing.T) {
	givenUpBehind(t, &growsOnFail{}, "over DynamoDB's limit of 409600")
}
