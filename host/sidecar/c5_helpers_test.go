package sidecar_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// entry is one batch a worker processed: when ProcessBatch ran, on which
// shard, and the events it carried ("<streamId>#<version>").
type entry struct {
	worker, shard string
	from, to      time.Time
	events        []string
}

// journal records the batches of every worker of a test, with one clock.
type journal struct {
	mu      sync.Mutex
	entries []entry
}

// observer is the Observer of one worker writing into the journal; it
// also keeps the shards the worker held after its last lease round.
func (j *journal) observer(worker string) *journalObs {
	return &journalObs{j: j, worker: worker, rounds: make(chan []string, 1000)}
}

type journalObs struct {
	sidecar.NopObserver
	j      *journal
	worker string
	mu     sync.Mutex
	held   []string
	rounds chan []string // the shards held after each lease round
}

func (o *journalObs) BatchProcessed(_, shard string, res *host.Result, took time.Duration, err error) {
	if err != nil || res == nil {
		return
	}
	now := time.Now()
	e := entry{worker: o.worker, shard: shard, from: now.Add(-took), to: now}
	for _, ev := range res.Events {
		e.events = append(e.events, fmt.Sprintf("%s#%d", ev.StreamID, ev.Version))
	}
	o.j.mu.Lock()
	o.j.entries = append(o.j.entries, e)
	o.j.mu.Unlock()
}

func (o *journalObs) LeasesHeld(_, _ string, held []string, _ int) {
	o.mu.Lock()
	o.held = slices.Clone(held)
	o.mu.Unlock()
	select {
	case o.rounds <- slices.Clone(held):
	default:
	}
}

// snapshot returns the entries so far, in the order their processing
// started.
func (j *journal) snapshot() []entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := slices.Clone(j.entries)
	slices.SortStableFunc(out, func(a, b entry) int { return a.from.Compare(b.from) })
	return out
}

// checkOneOwnerAtATime fails t when two workers processed one shard at
// overlapping times.
func checkOneOwnerAtATime(t *testing.T, es []entry) {
	t.Helper()
	byShard := map[string][]entry{}
	for _, e := range es {
		byShard[e.shard] = append(byShard[e.shard], e)
	}
	for shard, ss := range byShard {
		for i := range ss {
			for k := i + 1; k < len(ss); k++ {
				a, b := ss[i], ss[k]
				if a.worker != b.worker && a.from.Before(b.to) && b.from.Before(a.to) {
					t.Errorf("shard %s processed by %s and %s at the same time", shard, a.worker, b.worker)
				}
			}
		}
	}
}

// checkItemOrder fails t when an event of a stream instance was first
// delivered before one of its earlier versions; it returns how many
// events were delivered again (after a crash) by stream instance.
func checkItemOrder(t *testing.T, es []entry) map[string]int {
	t.Helper()
	next := map[string]int{}
	again := map[string]int{}
	for _, e := range es {
		for _, ev := range e.events {
			id, vs, _ := strings.Cut(ev, "#")
			var v int
			fmt.Sscan(vs, &v)
			switch {
			case v == next[id]+1:
				next[id] = v
			case v <= next[id]:
				again[id]++
			default:
				t.Errorf("%s delivered (by %s on shard %s) before version %d of %s", ev, e.worker, e.shard, next[id]+1, id)
				next[id] = v
			}
		}
	}
	return again
}

// checkParentsFirst fails t when a child shard's first batch started
// before its parent's last batch ended, whoever processed them.
func checkParentsFirst(t *testing.T, es []entry, parentOf map[string]string) (children int) {
	t.Helper()
	first, last := map[string]time.Time{}, map[string]time.Time{}
	for _, e := range es {
		if f, ok := first[e.shard]; !ok || e.from.Before(f) {
			first[e.shard] = e.from
		}
		if e.to.After(last[e.shard]) {
			last[e.shard] = e.to
		}
	}
	for child, parent := range parentOf {
		f, ok := first[child]
		if parent == "" || !ok {
			continue
		}
		children++
		assert.False(t, f.Before(last[parent]), "child %s started at %s, before its parent %s ended at %s", child, f.Format(time.StampMicro), parent, last[parent].Format(time.StampMicro))
	}
	return children
}

// parents maps every shard of the event table's stream to its parent.
func (e *env) parents(t testing.TB) map[string]string {
	t.Helper()
	ss, err := e.Server.StreamShards(context.Background(), e.cfg.EventStore.Table)
	require.NoError(t, err)
	out := map[string]string{}
	for _, s := range ss {
		out[s.ShardID] = s.ParentShardID
	}
	return out
}

// owners counts the leases each worker holds in the table.
func (e *env) owners(t testing.TB) map[string]int {
	out := map[string]int{}
	for _, l := range e.leases(t) {
		if l.owner != "" {
			out[l.owner]++
		}
	}
	return out
}

// waitFor polls cond until it holds, failing t after within.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runner runs a reader and lets the test cancel it without waiting.
type runner struct {
	cancel context.CancelCauseFunc
	done   chan error
}

func runAsync(r *sidecar.Reader) *runner {
	ctx, cancel := context.WithCancelCause(context.Background())
	x := &runner{cancel: cancel, done: make(chan error, 1)}
	go func() { x.done <- r.Run(ctx) }()
	return x
}

// stop cancels with cause and waits for Run's error.
func (x *runner) stop(cause error) error {
	x.cancel(cause)
	return <-x.done
}

// gate blocks evolve calls, once armed, until it is opened: a worker is
// so held in the middle of a batch.
type gate struct {
	mu      sync.Mutex
	armed   func(streamID string) bool
	blocked chan string   // the stream instance of the first call held
	open    chan struct{} // closed to let every call go on
	once    sync.Once
}

func newGate() *gate { return &gate{blocked: make(chan string, 1), open: make(chan struct{})} }

// arm makes the calls for which match is true wait.
func (g *gate) arm(match func(streamID string) bool) {
	g.mu.Lock()
	g.armed = match
	g.mu.Unlock()
}

func (g *gate) onEvolve(streamID string) {
	g.mu.Lock()
	m := g.armed
	g.mu.Unlock()
	if m == nil || !m(streamID) {
		return
	}
	select {
	case g.blocked <- streamID:
	default:
	}
	<-g.open
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// holdingTransport, while holding, holds each checkpoint write of the
// lease table until the test releases it.
type holdingTransport struct {
	next    http.RoundTripper
	holding atomic.Bool
	held    chan heldWrite // each checkpoint write held
}

// heldWrite is a checkpoint write on hold: closing release sends it.
type heldWrite struct {
	checkpoint string
	release    chan struct{}
}

func (h *holdingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.holding.Load() && strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".UpdateItem") && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`#c = :c`)) {
			_, ckpt, _ := strings.Cut(string(body), `":c":{"S":"`)
			ckpt, _, _ = strings.Cut(ckpt, `"`)
			w := heldWrite{checkpoint: ckpt, release: make(chan struct{})}
			h.held <- w
			select {
			case <-w.release:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
	}
	return h.next.RoundTrip(req)
}

// holding returns a DynamoDB client of the server whose lease checkpoint
// writes go through a holdingTransport.
func (e *env) holding(t testing.TB) (*dynamodb.Client, *holdingTransport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	ht := &holdingTransport{next: tr, held: make(chan heldWrite, 16)}
	c := dynamotest.ClientAt(t, e.Server.Endpoint(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: ht}
		o.RetryMaxAttempts = 1
	})
	return c, ht
}

// readerWith builds a reader named worker with the given lease-table
// client.
func (e *env) readerWith(t testing.TB, h *host.Host, worker string, obs sidecar.Observer, ddb *dynamodb.Client, edit ...func(*host.SidecarConfig)) *sidecar.Reader {
	t.Helper()
	cfg := *e.cfg
	side := *cfg.Sidecar
	side.WorkerID = worker
	for _, f := range edit {
		f(&side)
	}
	cfg.Sidecar = &side
	r, err := sidecar.New(context.Background(), h, &cfg, sidecar.Options{Observer: obs, Logger: quiet, DynamoDB: ddb, Streams: e.streamsClient(t)})
	require.NoError(t, err)
	return r
}
