package host_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// SweepOutbox delivers the effects a failed delivery left (no claim), as
// drain-pending would, while the target's breaker is closed; while it is
// open the sweep does not call the target (Skipped): the breaker's probe
// and drain deliver them once the target is back. It still counts what is
// pending then (the gauges show the effects piling up behind the breaker),
// and an effect the open breaker refuses is not warned of one by one with
// a promise of the sweep (the breaker's own warning covers them).
func TestO5_SweepOutboxDeliversWhatAFailedDeliveryLeftAndWaitsWhileTheBreakerIsOpen(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{down: true}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sink.ServeHTTP(w, r)
	}))
	defer srv.Close()
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	var logs syncBuffer
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "ledger_rows",
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"}, "readModel": {"entityType": "LedgerRow"},
	    "outbox": {"index": "pending", "deliver": {"webhook": {"url": %q}, "breaker": {"failures": 2, "cooldown": "1h"}}}}]}`,
		events, testlogic.Stream, srv.URL))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 2)), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	_, err = h.CreateTables(ctx)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, h.OutboxSweepEvery("ledger"), "every claimFor by default")
	write := func(row string) {
		evs, err := h.Append(ctx, testlogic.Stream, row, 0, add(1))
		require.NoError(t, err)
		res, err := h.ProcessBatch(ctx, records(h, evs))
		require.NoError(t, err)
		require.Equal(t, 1, res.Projections["ledger"].Rows[0].Undelivered)
	}
	setDown := func(down bool) {
		sink.mu.Lock()
		sink.down = down
		sink.mu.Unlock()
	}

	write("a") // one failure: the breaker stays closed
	setDown(false)
	s, err := h.SweepOutbox(ctx, "ledger")
	require.NoError(t, err)
	assert.Equal(t, host.OutboxSweep{Projection: "ledger", Pending: 2, Rows: 1, Delivered: 2}, s)
	assert.Equal(t, []string{"a/v1.0", "a/v1.1"}, sink.versions())

	setDown(true)
	write("b")
	write("c") // the second failure in a row: open
	setDown(false)
	before := calls.Load()
	s, err = h.SweepOutbox(ctx, "ledger")
	require.NoError(t, err)
	assert.Equal(t, "breaker open", s.Skipped)
	assert.Zero(t, s.Delivered)
	assert.Equal(t, before, calls.Load(), "an open breaker: the sweep calls nothing")
	assert.Equal(t, []int{4, 2}, []int{s.Pending, s.Rows}, "an open breaker: the sweep still counts what is pending")

	logs.Reset()
	write("d") // refused by the open breaker
	assert.NotContains(t, logs.String(), "outbox effect not delivered", "no warning per effect the open breaker refuses")
	s, err = h.SweepOutbox(ctx, "ledger")
	require.NoError(t, err)
	assert.Equal(t, []int{6, 3}, []int{s.Pending, s.Rows})
	assert.Equal(t, before, calls.Load())
}

// syncBuffer is a bytes.Buffer safe for the log handler's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
