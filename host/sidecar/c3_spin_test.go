package sidecar_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestC3_AFailingLeaseRoundDoesNotSpin has every shard's lease held by a
// worker that is gone (its leases expire during the outage), and the lease
// table unreachable from the reader's first round on: the reader makes a
// handful of lease rounds per second, not one per millisecond, logs the
// failure a bounded number of times, and says so once the table answers
// again, then takes the expired leases.
func TestC3_AFailingLeaseRoundDoesNotSpin(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{})
	ctx := context.Background()
	api := e.streamsClient(t)
	arn, err := feed.LatestStream(ctx, api, e.cfg.EventStore.Table)
	require.NoError(t, err)
	shards, err := feed.NewReader(api, arn, feed.Options{}).Shards(ctx)
	require.NoError(t, err)
	tb := lease.NewTable(e.Client, e.cfg.Sidecar.LeaseTable)
	for _, s := range shards {
		_, err := tb.Create(ctx, arn, s.ID, nil)
		require.NoError(t, err)
		l, ok, err := tb.Get(ctx, s.ID)
		require.NoError(t, err)
		require.True(t, ok)
		_, err = tb.Take(ctx, l, "gone", "gone-instance")
		require.NoError(t, err)
	}

	down := &downTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
	client := dynamotest.ClientAt(t, e.Server.Endpoint(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: down}
		o.RetryMaxAttempts = 1
	})
	logs := &countingHandler{}
	cfg := *e.cfg
	side := *cfg.Sidecar
	side.WorkerID = "w1"
	cfg.Sidecar = &side
	obs := &roundObs{}
	r, err := sidecar.New(ctx, e.host(t, &testlogic.Ledger{}), &cfg, sidecar.Options{Observer: obs, Logger: slog.New(logs), DynamoDB: client, Streams: api})
	require.NoError(t, err)
	x := runAsync(r)
	waitFor(t, 10*time.Second, "a first lease round", func() bool { return obs.rounds.Load() > 0 })
	down.down.Store(true)
	const outage = 3 * time.Second // the leases of "gone" expire 600ms in
	before := down.scans.Load()
	time.Sleep(outage)
	rounds := down.scans.Load() - before
	down.down.Store(false)
	every := time.Duration(side.LeaseDuration) / 3
	assert.LessOrEqual(t, rounds, int64(outage/every)+3, "lease rounds during a %s outage (a round every %s)", outage, every)
	assert.Positive(t, rounds)
	waitFor(t, 10*time.Second, "the reader to take the expired leases", func() bool { return r.Stats().Shards > 0 })
	require.NoError(t, x.stop(nil))
	failed, back := logs.count("lease round failed"), logs.count("lease round succeeded again")
	assert.LessOrEqual(t, failed, 5, "warnings of failed lease rounds (of %d rounds)", rounds)
	assert.Positive(t, failed)
	assert.Equal(t, 1, back, "one line says the lease rounds succeed again")
}

// downTransport fails every request while down (as a server that does
// not answer), and counts the Scan requests (one a lease round).
type downTransport struct {
	next  http.RoundTripper
	down  atomic.Bool
	scans atomic.Int64
}

func (d *downTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".Scan") {
		d.scans.Add(1)
	}
	if d.down.Load() {
		return nil, errors.New("dial tcp: connection refused (the test's outage)")
	}
	return d.next.RoundTrip(req)
}

// roundObs counts lease rounds that went through.
type roundObs struct {
	sidecar.NopObserver
	rounds atomic.Int64
}

func (o *roundObs) LeasesHeld(string, string, []string, int) { o.rounds.Add(1) }

// countingHandler keeps the messages logged.
type countingHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// count is how many messages logged start with prefix.
func (h *countingHandler) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}
