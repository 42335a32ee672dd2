package host_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// With background delivery a batch does not wait for its consumer: while
// the webhook holds every request, ProcessBatch returns with the effects
// committed (none reported delivered); a second write of a row queues
// behind the first; once the webhook answers, every effect arrives once,
// in order per row. Inline (the default), the same batch waits for the
// webhook (a soak with a slow webhook fell to 10–40 records/s).
func TestO3_BackgroundDeliveryDoesNotHoldTheBatch(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the consumer is slow: nothing is answered until released
		sink.ServeHTTP(w, r)
	}))
	defer srv.Close()
	h, _ := outboxHost(t, srv.URL, 1, host.WithBackgroundDelivery(4))
	var recs []host.Record
	for i := range 6 {
		e, err := h.Append(ctx, testlogic.Stream, fmt.Sprint("r", i), 0, add(1), add(2))
		require.NoError(t, err)
		recs = append(recs, records(h, e)...)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := h.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		assert.Empty(t, res.Failed())
		for _, o := range res.Projections["ledger"].Rows {
			assert.Equal(t, 2, o.Enqueued)
			assert.Zero(t, o.Delivered, "delivered in the background, after the batch")
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the batch waited for the webhook")
	}
	// a second write of r0 while its first write's effects wait
	e, err := h.Append(ctx, testlogic.Stream, "r0", 2, add(3))
	require.NoError(t, err)
	res, err := h.ProcessBatch(ctx, records(h, e))
	require.NoError(t, err)
	assert.Empty(t, res.Failed())

	close(release)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && len(sink.versions()) < 13 {
		time.Sleep(20 * time.Millisecond)
	}
	got := sink.versions()
	require.Len(t, got, 13, "every effect once: %v", got)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	for v, n := range seen {
		assert.Equal(t, 1, n, v)
	}
	var r0 []string
	for _, v := range got {
		if len(v) > 3 && v[:3] == "r0/" {
			r0 = append(r0, v)
		}
	}
	assert.Equal(t, []string{"r0/v1.0", "r0/v2.0", "r0/v3.0"}, r0, "in order per row")
	require.NoError(t, h.Close(ctx))
}

// With background delivery, an effect the consumer refuses for now (a 503
// while it deploys) is tried again within a second, though its row gets
// no more events and no sweep runs; before, it waited for the sweep
// (claimFor, 30 s by default). An effect refused for good (a 400) is not
// tried again: it waits for an operator (host drain --skip).
func TestO3_BackgroundDeliveryTriesAnEffectRefusedForNowAgainSoon(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{}
	var mu sync.Mutex
	answers := map[string][]int{"r0": {503, 503}, "r1": {400}} // then 200
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		row := "r0"
		if strings.Contains(string(b), `"streamId":"r1"`) {
			row = "r1"
		}
		mu.Lock()
		calls[row]++
		var code int
		if len(answers[row]) > 0 {
			code, answers[row] = answers[row][0], answers[row][1:]
		}
		mu.Unlock()
		if code != 0 {
			http.Error(w, "not now", code)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		sink.ServeHTTP(w, r)
	}))
	defer srv.Close()
	h, _ := outboxHost(t, srv.URL, 1, host.WithBackgroundDelivery(4))
	var recs []host.Record
	for _, id := range []string{"r0", "r1"} {
		e, err := h.Append(ctx, testlogic.Stream, id, 0, add(1))
		require.NoError(t, err)
		recs = append(recs, records(h, e)...)
	}
	res, err := h.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	require.Empty(t, res.Failed())

	require.Eventually(t, func() bool { return len(sink.versions()) == 1 }, 20*time.Second, 20*time.Millisecond,
		"the 503s are tried again")
	assert.Equal(t, []string{"r0/v1.0"}, sink.versions())
	// r1's refusal came before r0's first retry: a retry of it would have run by now
	mu.Lock()
	assert.Equal(t, 3, calls["r0"], "two refusals, then delivered")
	assert.Equal(t, 1, calls["r1"], "a permanent refusal is not tried again")
	mu.Unlock()
	require.NoError(t, h.Close(ctx))
}
