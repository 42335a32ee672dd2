package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// webhookSink is an HTTP server recording the effects posted to it; down
// makes it answer 503.
type webhookSink struct {
	mu   sync.Mutex
	got  []map[string]any
	keys []string
	down bool
}

func (s *webhookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var m map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.got = append(s.got, m)
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
}

func (s *webhookSink) versions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.got {
		out = append(out, fmt.Sprint(m["streamId"], "/v", m["version"], ".", m["index"]))
	}
	return out
}

// outboxHost is a host whose ledger projection has an outbox with an index
// and delivers to url; applied events carry n effects.
func outboxHost(t *testing.T, url string, n int, opts ...host.Option) (*host.Host, *testlogic.Effects) {
	t.Helper()
	ctx := context.Background()
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	deliverJSON := ""
	if url != "" {
		deliverJSON = fmt.Sprintf(`, "deliver": {"webhook": {"url": %q}}`, url)
	}
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "ledger_rows",
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "LedgerRow"},
	    "outbox": {"index": "pending"%s}}]}`, events, testlogic.Stream, deliverJSON))
	require.NoError(t, err)
	fx := testlogic.WithEffects(&testlogic.Ledger{}, n)
	opts = append([]host.Option{host.WithNative("ledger", fx), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	h, err := host.New(ctx, cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	reps, err := h.CreateTables(ctx)
	require.NoError(t, err)
	require.Len(t, reps, 2, "the event table and the read-model table with its outbox index")
	return h, fx
}

func records(h *host.Host, evs []abi.Event) []host.Record {
	var recs []host.Record
	for i, ev := range evs {
		recs = append(recs, host.Record{EventName: host.EventInsert, EventID: fmt.Sprint("e-", i),
			DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(100 + i)}})
	}
	return recs
}

func add(n int) host.NewEvent {
	return host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(fmt.Sprint(n))}}
}

// ProcessBatch commits the effects with the rows and posts them to the
// configured webhook right after each write, in order, with an
// idempotency key; a webhook that is down leaves them pending without
// failing a record, and drain-pending delivers them later.
func TestO3_ProcessBatchDeliversToAWebhook(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	h, _ := outboxHost(t, srv.URL, 2)
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0, add(1), add(2))
	require.NoError(t, err)

	res, err := h.ProcessBatch(ctx, records(h, evs))

	require.NoError(t, err)
	assert.Empty(t, res.Failed())
	o := res.Projections["ledger"].Rows[0]
	assert.Equal(t, 4, o.Enqueued)
	assert.Equal(t, 4, o.Delivered)
	assert.Equal(t, []string{"a/v1.0", "a/v1.1", "a/v2.0", "a/v2.1"}, sink.versions())
	first := deliver.Effect{Projection: "ledger", Stream: testlogic.Stream, StreamID: "a", Version: 1, Index: 0, Key: testlogic.RowKey("a")}
	assert.Equal(t, first.IdempotencyKey(), sink.keys[0])

	sink.mu.Lock()
	sink.down = true
	sink.mu.Unlock()
	more, err := h.Append(ctx, testlogic.Stream, "a", 2, add(3))
	require.NoError(t, err)
	res, err = h.ProcessBatch(ctx, records(h, more))
	require.NoError(t, err)
	assert.Empty(t, res.Failed(), "an undelivered effect never fails its record")
	o = res.Projections["ledger"].Rows[0]
	assert.Equal(t, 2, o.Enqueued)
	assert.Equal(t, 1, o.Undelivered)
	row, ok, err := h.Row(ctx, "ledger", testlogic.RowKey("a"))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "6", row["total"].Str)

	sink.mu.Lock()
	sink.down = false
	sink.mu.Unlock()
	reps, err := h.DrainPending(ctx, "ledger", nil)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	assert.Len(t, reps[0].Delivered, 2)
	assert.Equal(t, []string{"a/v1.0", "a/v1.1", "a/v2.0", "a/v2.1", "a/v3.0", "a/v3.1"}, sink.versions())
}

// Host.Drain delivers one row's effects to the target given; WithDeliver
// replaces the configured target on ApplyEvents.
func TestO2_HostDrainsARowToAGoCallback(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []uint64
	target := deliver.Func(func(_ context.Context, e deliver.Effect) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Version)
		return nil
	})
	h, _ := outboxHost(t, "", 1)
	evs, err := h.Append(ctx, testlogic.Stream, "b", 0, add(1), add(2), add(3))
	require.NoError(t, err)
	res, err := h.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	require.Equal(t, 3, res.Rows[0].Enqueued)
	assert.Zero(t, res.Rows[0].Delivered, "no target configured: the effects wait")

	_, err = h.Drain(ctx, "ledger", testlogic.RowKey("b"), nil)
	assert.ErrorIs(t, err, host.ErrNoTarget)
	rep, err := h.Drain(ctx, "ledger", testlogic.RowKey("b"), target)
	require.NoError(t, err)
	assert.Len(t, rep.Delivered, 3)
	assert.Equal(t, []uint64{1, 2, 3}, got)

	h2, _ := outboxHost(t, "", 1, host.WithDeliver(target))
	evs, err = h2.Append(ctx, testlogic.Stream, "c", 0, add(1))
	require.NoError(t, err)
	res, err = h2.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Rows[0].Delivered)
	assert.Equal(t, []uint64{1, 2, 3, 1}, got)
}

func TestO1_ConfigurationRefusesAnOutboxWithoutRevision(t *testing.T) {
	_, err := host.ParseConfig([]byte(`{
	  "eventStore": {"table": "events", "schema": "test", "streams": [{"name": "Acct", "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "rows", "key": ["pk"],
	    "checkpoint": {"field": "version"},
	    "outbox": {"claimFor": "-1s", "deliver": {"webhook": {"url": "ftp://x"}, "sqs": {"queueUrl": "q"}}}}]}`))
	require.Error(t, err)
	for _, want := range []string{
		`projection "ledger".outbox: needs revision`,
		`projection "ledger".outbox.table is required`,
		`projection "ledger".outbox.claimFor`,
		`projection "ledger".outbox.deliver.webhook.url`,
		`projection "ledger".outbox.deliver: names 2 targets`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// With outbox.table the effects go to a table of their own, which tables
// create makes with the index; drain-pending finds them there.
func TestO4_EffectsInATableOfTheirOwn(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	rows := env.Table(t, "ledger", false) // exists without the outbox index
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [
	    {"name": "ledger", "plugin": "native:ledger", "table": %q,
	     "checkpoint": {"field": "version"}, "revision": {"field": "rev"},
	     "outbox": {"table": "ledger_effects", "index": "pending"}},
	    {"name": "inrow", "plugin": "native:ledger", "table": %q,
	     "checkpoint": {"field": "version2"}, "revision": {"field": "rev2"},
	     "outbox": {"index": "pending"}}]}`, events, testlogic.Stream, rows, rows))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 1)), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })

	reps, err := h.CreateTables(ctx)

	require.NoError(t, err)
	byTable := map[string]host.TableReport{}
	for _, r := range reps {
		byTable[r.Table] = r
	}
	require.Contains(t, byTable, "ledger_effects")
	assert.True(t, byTable["ledger_effects"].Created)
	assert.Equal(t, []string{"pending"}, byTable[rows].IndexesAdded, "the in-row outbox's index is added to the existing table")

	evs, err := h.Append(ctx, testlogic.Stream, "a", 0, add(1), add(2))
	require.NoError(t, err)
	res, err := h.ApplyEvents(ctx, "ledger", evs...)
	require.NoError(t, err)
	require.Equal(t, 2, res.Rows[0].Enqueued)
	var got []uint64
	target := deliver.Func(func(_ context.Context, e deliver.Effect) error {
		got = append(got, e.Version)
		return nil
	})
	pending, err := h.DrainPending(ctx, "ledger", target)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, testlogic.RowKey("a"), pending[0].Key)
	assert.Equal(t, []uint64{1, 2}, got)
}
