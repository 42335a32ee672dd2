package sidecar_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// changingLedger is the test ledger whose "Fail" event fails with another
// reason from its fourth evolve on: a plugin swapped while a record kept
// failing.
type changingLedger struct {
	*testlogic.Ledger
	calls atomic.Int32
}

func (l *changingLedger) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	resp, err := l.Ledger.Evolve(ctx, req)
	if l.calls.Add(1) > 3 && resp != nil {
		for i, d := range resp.Decisions {
			if d.Error != nil {
				resp.Decisions[i].Error = &abi.Error{Tag: "Changed", Message: "the new version fails it another way"}
			}
		}
	}
	return resp, err
}

// A record that keeps failing with no policy to give it up is warned of at
// its first failure, again as soon as it fails for another reason, and at
// its 10th attempt, with the time it has been failing since; the attempts
// in between are debug lines.
func TestC4_ARecordThatKeepsFailingIsWarnedOfAgainWhenItsReasonChangesAndAtItsTenthAttempt(t *testing.T) {
	defer sidecar.SetRetryDelay(time.Millisecond)()
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50})
	h := e.host(t, &changingLedger{Ledger: &testlogic.Ledger{}})
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(logs.String(), "attempt=12 ") {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))
	var warns []string
	debug := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		switch {
		case !strings.Contains(l, "record failed; it is delivered again"):
		case strings.Contains(l, "level=WARN"):
			warns = append(warns, l)
		case strings.Contains(l, "level=DEBUG"):
			debug++
		}
	}
	require.Len(t, warns, 3, "log:\n%s", logs.String())
	assert.Contains(t, warns[0], "attempt=1 ")
	assert.Contains(t, warns[0], "Boom")
	assert.Contains(t, warns[1], "Changed")
	assert.Contains(t, warns[1], "failingSince=")
	assert.Contains(t, warns[2], "attempt=10 ")
	assert.Contains(t, warns[2], "Changed")
	for _, w := range warns {
		assert.Contains(t, w, "its shard waits behind it", "each warning says what the wait means")
	}
	assert.GreaterOrEqual(t, debug, 8, "the attempts between the warnings are debug lines")
}

// A record that fails before any projection (its event item does not
// decode) is logged, retried and given up under a name a reader
// understands, not an empty projection.
func TestC4_ARecordThatDoesNotDecodeIsLoggedAsFailingBeforeAnyProjection(t *testing.T) {
	defer sidecar.SetRetryDelay(time.Millisecond)()
	qfile := filepath.Join(t.TempDir(), "q.jsonl")
	retries := 1
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50,
		Failure: host.FailurePolicyConfig{MaxRetries: &retries, OnFailure: &host.OnFailureConfig{File: qfile}}})
	h := e.host(t, &testlogic.Ledger{})
	l := eventstore.DefaultLayout(e.cfg.EventStore.Schema, e.cfg.EventStore.SchemaVersion)
	it := l.Item(abi.Event{Stream: testlogic.Stream, StreamID: "bad", Version: 1, Type: "Add", Data: abi.Item{"n": abi.N("1")}})
	delete(it, eventstore.AttrEventType)
	av, err := ddbclient.ToAttributeMap(it)
	require.NoError(t, err)
	_, err = e.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.cfg.EventStore.Table), Item: av})
	require.NoError(t, err)
	var spans []span
	var mu sync.Mutex
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", newRecorder("w1", &spans, &mu), slog.New(slog.NewTextHandler(logs, nil))))
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(logs.String(), "record given up") {
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, stop(nil))
	out := logs.String()
	require.Contains(t, out, "record given up", "log:\n%s", out)
	assert.Contains(t, out, `projection="(none: the record failed before any projection)"`)
	assert.Contains(t, out, `projections="[(none: the record failed before any projection)]"`)
	assert.NotContains(t, out, `projection="" `)
	assert.Contains(t, out, `eventType`, "the reason names what does not decode")
}
