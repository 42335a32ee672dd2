package sidecar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var _ sidecar.SweepObserver = (*telemetry.Metrics)(nil)

// hook is a test webhook counting the deliveries of each effect, in the
// order they arrived.
type hook struct {
	mu    sync.Mutex
	count map[string]int
	order []string
}

func (k *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	name := fmt.Sprint(m["streamId"], "/v", m["version"], ".", m["index"])
	k.mu.Lock()
	defer k.mu.Unlock()
	k.count[name]++
	k.order = append(k.order, name)
}

// got returns how many times each effect arrived, and how many arrived.
func (k *hook) got() (map[string]int, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]int, len(k.count))
	for n, c := range k.count {
		out[n] = c
	}
	return out, len(k.order)
}

// stalled is a delivery target that never delivers: each call waits until
// its context ends, as a webhook that hangs until its process is killed.
type stalled struct{ calls atomic.Int64 }

func (s *stalled) Deliver(ctx context.Context, _ deliver.Effect) error {
	s.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// sweeps counts the effects each worker's sweeps delivered.
type sweeps struct {
	sidecar.NopObserver
	delivered atomic.Int64
	runs      atomic.Int64
}

func (s *sweeps) OutboxSwept(r host.OutboxSweep, _ time.Time, err error) {
	if err == nil && r.Skipped == "" {
		s.runs.Add(1)
		s.delivered.Add(int64(r.Delivered))
	}
}

func (s *sweeps) NotSweeping(string) {}

// startOutbox is start with the ledger projection committing two effects
// per event to an outbox with an index, claimed for claimFor and delivered
// to url.
func startOutbox(t *testing.T, url string, claimFor time.Duration) *env {
	t.Helper()
	e := start(t, ddblocal.StreamOptions{Shards: 2}, host.SidecarConfig{})
	p := &e.cfg.Projections[0]
	p.Table += "-ob"
	p.Checkpoint = host.CheckpointConfig{Map: "checkpoints"}
	p.Revision = &host.RevisionConfig{Field: "rev"}
	p.ReadModel = host.ReadModelConfig{EntityType: "LedgerRow"}
	p.Outbox = &host.OutboxConfig{Index: "pending", ClaimFor: host.Duration(claimFor),
		Deliver: &host.DeliverConfig{Webhook: &host.WebhookConfig{URL: url}}}
	_, err := e.outboxHost(t, nil).CreateTables(context.Background())
	require.NoError(t, err)
	return e
}

// outboxHost is a host of e's configuration; with to set, it delivers
// there instead of the configured webhook.
func (e *env) outboxHost(t *testing.T, to deliver.Target) *host.Host {
	t.Helper()
	opts := []host.Option{host.WithClient(e.Client), host.WithLogger(quiet), host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 2))}
	if to != nil {
		opts = append(opts, host.WithDeliver(to))
	}
	h, err := host.New(context.Background(), e.cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// A worker killed while its rows' effects were being delivered (committed
// and claimed, their delivery never finished, the claim not released)
// leaves them in the outbox; the two workers running after it deliver
// every one of them, once, in order per row, after the claims end,
// without `host drain-pending`: the one holding the lowest shard lease
// sweeps, the other does not.
func TestO5_RunningWorkersSweepEffectsAKilledWorkerLeft(t *testing.T) {
	sink := &hook{count: map[string]int{}}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	claimFor := 1500 * time.Millisecond
	e := startOutbox(t, srv.URL, claimFor)
	rows, events := []string{"a", "b", "c", "d"}, 3

	hang := &stalled{}
	h1 := e.outboxHost(t, hang)
	stop1 := run(e.reader(t, h1, "w1", nil))
	for _, id := range rows {
		appendAdds(t, h1, id, 0, events)
	}
	require.Eventually(t, func() bool { return hang.calls.Load() >= 2 }, 10*time.Second, 5*time.Millisecond, "deliveries under way")
	require.ErrorIs(t, stop1(sidecar.ErrAbandoned), sidecar.ErrAbandoned, "killed: no checkpoint, no release of leases or claims")
	killed := time.Now()

	obs2, obs3 := &sweeps{}, &sweeps{}
	stop2 := run(e.reader(t, e.outboxHost(t, nil), "w2", obs2))
	defer stop2(nil)
	stop3 := run(e.reader(t, e.outboxHost(t, nil), "w3", obs3))
	defer stop3(nil)

	want := len(rows) * events * 2
	require.Eventually(t, func() bool { _, n := sink.got(); return n >= want }, 20*time.Second, 10*time.Millisecond,
		"every effect delivered without drain-pending")
	time.Sleep(2 * claimFor) // more sweeps: nothing arrives twice
	count, n := sink.got()
	assert.Equal(t, want, n, "each effect once: %v", count)
	for _, id := range rows {
		for v := 1; v <= events; v++ {
			for i := range 2 {
				assert.Equal(t, 1, count[fmt.Sprintf("%s/v%d.%d", id, v, i)], "%s/v%d.%d", id, v, i)
			}
		}
	}
	sink.mu.Lock()
	order := append([]string(nil), sink.order...)
	sink.mu.Unlock()
	for _, id := range rows {
		var got []string
		for _, name := range order {
			if name[:len(id)+1] == id+"/" {
				got = append(got, name)
			}
		}
		assert.Equal(t, []string{id + "/v1.0", id + "/v1.1", id + "/v2.0", id + "/v2.1", id + "/v3.0", id + "/v3.1"}, got, "row %s in order", id)
	}
	assert.Positive(t, obs2.delivered.Load()+obs3.delivered.Load(), "the sweep delivered what the killed worker claimed")
	assert.True(t, obs2.runs.Load() == 0 || obs3.runs.Load() == 0, "one worker sweeps: w2 %d sweeps, w3 %d", obs2.runs.Load(), obs3.runs.Load())
	assert.Greater(t, time.Since(killed), claimFor)
	t.Logf("sweeps: w2 %d (delivered %d), w3 %d (delivered %d); killed worker had %d deliveries under way", obs2.runs.Load(), obs2.delivered.Load(), obs3.runs.Load(), obs3.delivered.Load(), hang.calls.Load())
}

// An outbox that delivers but has no index cannot be swept: nothing finds
// the effects a crash or a failed delivery leaves. The sweeper says so at
// warning level, naming what to set, where it logged an info line that
// sent the operator to drain-pending, which needs the index too.
func TestO5_AnOutboxWithoutAnIndexWarnsThatNothingSweepsIt(t *testing.T) {
	e := startOutbox(t, "http://127.0.0.1:1/never", time.Second)
	e.cfg.Projections[0].Outbox.Index = ""
	h := e.outboxHost(t, nil)
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", nil, slog.New(slog.NewTextHandler(logs, nil))))
	defer func() { _ = stop(nil) }()
	appendAdds(t, h, "a", 0, 1)
	waitMetric(t, "the sweeper warns", func() bool { return strings.Contains(logs.String(), "has no outbox.index") })
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "run `host tables create`")
}
