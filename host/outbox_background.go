package host

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/keys"
)

// WithBackgroundDelivery makes the host deliver the effects each row write
// commits in the background, at most rows rows at a time, instead of
// before ProcessBatch returns: a batch (and its checkpoint) no longer
// waits for the consumer, so a slow webhook bounds the delivery's own pace
// but not the projection's. A row's effects still go out in order, one
// write's after the one before; the outcome reports them committed, not
// delivered. For a long-running process (host run): an effect a process
// stops before delivering stays claimed until claimFor ends, and the
// outbox sweep delivers it. Close waits for the deliveries in flight, as
// long as its context allows. Not for a Lambda function, whose invocation
// ends with the batch.
func WithBackgroundDelivery(rows int) Option {
	return func(o *options) { o.background = max(rows, 1) }
}

// background delivers committed effects off the batch's path: one queue
// per row, run in order, at most cap(sem) rows at a time.
type background struct {
	mu     sync.Mutex
	rows   map[string][]queued // by projection and row: the writes waiting
	sem    chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
}

type queued struct {
	po  *projectionOutbox
	c   apply.Committed
	log *slog.Logger
}

func newBackground(rows int) *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{rows: map[string][]queued{}, sem: make(chan struct{}, rows), ctx: ctx, cancel: cancel}
}

// enqueue queues a write's effects behind its row's earlier writes; false
// when the host is closing (the effects stay committed and claimed, for
// the sweep).
func (b *background) enqueue(projection string, q queued) bool {
	id := projection + "\x00" + keys.String(q.c.Key)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	waiting, running := b.rows[id]
	b.rows[id] = append(waiting, q)
	if !running {
		b.wg.Add(1)
		go b.run(id)
	}
	return true
}

// run delivers a row's queued writes in order until none is left.
func (b *background) run(id string) {
	defer b.wg.Done()
	select {
	case b.sem <- struct{}{}:
	case <-b.ctx.Done():
		b.mu.Lock()
		delete(b.rows, id)
		b.mu.Unlock()
		return
	}
	defer func() { <-b.sem }()
	for {
		b.mu.Lock()
		qs := b.rows[id]
		if len(qs) == 0 || b.ctx.Err() != nil {
			delete(b.rows, id)
			b.mu.Unlock()
			return
		}
		q := qs[0]
		b.rows[id] = qs[1:]
		b.mu.Unlock()
		if _, err := q.po.drainer.Deliver(b.ctx, q.c, q.po.target); err != nil && b.ctx.Err() == nil {
			q.log.Warn("delivering the row's effects after its write failed; they stay in its outbox: "+q.po.drainer.LaterHint(true), "row", keys.String(q.c.Key), "err", err)
		}
	}
}

// close stops taking writes and waits for the queued deliveries until ctx
// ends; then it stops them (their effects stay claimed until claimFor
// ends, and the sweep delivers them).
func (b *background) close(ctx context.Context) {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		b.cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}
	b.cancel()
}
