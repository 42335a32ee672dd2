package host_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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
