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

// decodeWatch is an Observer counting the batches with a record that
// failed to decode, the records passed over as obsolete, those folded
// from their corrected item, and the records given up.
type decodeWatch struct {
	sidecar.NopObserver
	mu                      sync.Mutex
	failed, obsolete, given int
	corrected               int
}

func (w *decodeWatch) BatchProcessed(_, _ string, res *host.Result, _ time.Duration, _ error) {
	if res == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(res.DecodeFailures) > 0 {
		w.failed++
	}
	w.obsolete += len(res.Obsolete)
	w.corrected += len(res.Corrected)
}

func (w *decodeWatch) RecordGivenUp(string, string, string, host.Record, string) {
	w.mu.Lock()
	w.given++
	w.mu.Unlock()
}

func (w *decodeWatch) counts() (failed, obsolete, given int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed, w.obsolete, w.given
}

// strayShard fills the event table's one shard with: a's two events, a
// stray item another writer put (the partition key of acct x, but
// streamId y), and c's two events. It returns the stray item.
func strayShard(t *testing.T, e *env, h *host.Host) abi.Item {
	t.Helper()
	appendAdds(t, h, "a", 0, 2)
	stray := h.EventItem(abi.Event{Stream: testlogic.Stream, StreamID: "y", Version: 1, Type: "Add",
		Data: abi.Item{"n": abi.N("1")}, Timestamp: "2026-12-05T00:00:00.000Z"})
	stray["pk"] = h.EventItem(abi.Event{Stream: testlogic.Stream, StreamID: "x", Version: 1, Type: "Add"})["pk"]
	e.Put(t, e.cfg.EventStore.Table, stray)
	appendAdds(t, h, "c", 0, 2)
	return stray
}

// passOver runs a reader (one record a batch) over a strayShard: the
// stray item's record fails and blocks the shard (c's rows stay empty);
// then fix changes the event table, and the reader's next attempt passes
// the record over and c's rows fold. It returns the watch and the log.
func passOver(t *testing.T, side host.SidecarConfig, fix func(e *env, stray abi.Item)) (*decodeWatch, string) {
	defer sidecar.SetRetryDelay(20 * time.Millisecond)()
	side.BatchSize = 1
	e := start(t, ddblocal.StreamOptions{Shards: 1}, side)
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h, err := host.New(context.Background(), e.cfg, host.WithClient(e.Client), host.WithLogger(log), host.WithNative("ledger", &testlogic.Ledger{}))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	stray := strayShard(t, e, h)
	w := &decodeWatch{}
	stopRun := run(e.readerLogging(t, h, "w1", w, log))
	stop := sync.OnceValue(func() error { return stopRun(nil) }) // a failed require stops it too
	defer stop()
	e.waitRows(t, map[string]string{"a": foldLog(2)}, 10*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for failed, _, _ := w.counts(); failed < 3 && time.Now().Before(deadline); failed, _, _ = w.counts() {
		time.Sleep(10 * time.Millisecond)
	}
	failed, obsolete, _ := w.counts()
	require.GreaterOrEqual(t, failed, 3, "the stray item's record fails, again and again")
	require.Zero(t, obsolete)
	assert.Empty(t, e.rowLog(t, "c"), "the shard waits behind the stray item's record")

	fix(e, stray)
	e.waitRows(t, map[string]string{"a": foldLog(2), "c": foldLog(2)}, 20*time.Second)
	require.NoError(t, stop())
	return w, logs.String()
}

// TestES7_ARecordWhoseItemWasRemovedIsPassedOver is the user's trial: an
// item another writer put with a wrong streamId blocks its shard; the
// operator removes it, as the error says; the reader's next attempt
// passes the record over (the change-feed record itself cannot change),
// the rows after it fold, and the failure policy gives up nothing.
func TestES7_ARecordWhoseItemWasRemovedIsPassedOver(t *testing.T) {
	retries := 1000
	side := host.SidecarConfig{Failure: host.FailurePolicyConfig{MaxRetries: &retries,
		OnFailure: &host.OnFailureConfig{File: filepath.Join(t.TempDir(), "q.jsonl")}}}
	w, logs := passOver(t, side, func(e *env, stray abi.Item) {
		e.Delete(t, e.cfg.EventStore.Table, abi.Item{"pk": stray["pk"], "sk": stray["sk"]})
	})
	_, obsolete, given := w.counts()
	assert.Equal(t, 1, obsolete, "passed over once")
	assert.Zero(t, given, "nothing given up")
	assert.Contains(t, logs, "change-feed record passed over")
	assert.Contains(t, logs, "it was removed since")
	assert.Equal(t, 1, strings.Count(logs, "change-feed record passed over"), "one warning")
}

// TestES7_ARecordWhoseItemWasCorrectedIsFoldedAsItIsNow: with no failure
// policy (a scaffold's configuration), the operator corrects the stray
// item in place (its streamId now the one its key says): the record that
// showed it as it was is folded from the item as it is now, at once (the
// correction's MODIFY record would never fold it, and x has no later
// event), and the shard moves on.
func TestES7_ARecordWhoseItemWasCorrectedIsFoldedAsItIsNow(t *testing.T) {
	var fixed *env
	w, logs := passOver(t, host.SidecarConfig{}, func(e *env, stray abi.Item) {
		fixed = e
		item := abi.CloneItem(stray)
		item["streamId"] = abi.S("x")
		e.Put(t, e.cfg.EventStore.Table, item)
	})
	_, obsolete, given := w.counts()
	assert.Zero(t, obsolete, "not passed over")
	w.mu.Lock()
	assert.Equal(t, 1, w.corrected, "folded from the corrected item once")
	w.mu.Unlock()
	assert.Zero(t, given)
	assert.Contains(t, logs, "change-feed record's event item was corrected since")
	assert.Equal(t, foldLog(1), fixed.rowLog(t, "x"), "x's row holds the corrected event")
}
