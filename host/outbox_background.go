package host

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
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
// outbox sweep delivers it. A delivery the target refuses for now (a 5xx,
// a timeout) is tried again after 200 ms, 1 s and 5 s while the row has
// no later write queued (whose delivery would try it first), then left to
// the sweep. Close waits for the deliveries in flight, as
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
	// retry, when positive, makes this a drain of the row c.Key names
	// (c has no items), the retry-th after a delivery its target refused.
	retry int
}

// retryAfter are the waits before a row's delivery is tried again in the
// background after its target refused it for now: a consumer's brief
// failure (a deploy, a 503) costs a fraction of a second instead of the
// sweep's claimFor.
var retryAfter = []time.Duration{200 * time.Millisecond, time.Second, 5 * time.Second}

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
		var (
			rep outbox.Report
			err error
		)
		if q.retry > 0 {
			rep, err = q.po.drainer.Drain(b.ctx, q.c.Key, q.po.target)
		} else {
			rep, err = q.po.drainer.Deliver(b.ctx, q.c, q.po.target)
		}
		if err != nil && b.ctx.Err() == nil {
			q.log.Warn("delivering the row's effects after its write failed; they stay in its outbox: "+q.po.drainer.LaterHint(true), "row", keys.String(q.c.Key), "err", err)
		}
		if err == nil && rep.Undelivered != nil && q.retry < len(retryAfter) && refusedForNow(rep.Undelivered.Err) {
			b.later(id, queued{po: q.po, c: apply.Committed{Key: q.c.Key}, log: q.log, retry: q.retry + 1})
		}
	}
}

// refusedForNow reports whether a delivery's error may pass when tried
// again soon: not a permanent refusal, nor an open breaker (which lets
// the next delivery through only after its cooldown).
func refusedForNow(err error) bool {
	return err != nil && !errors.Is(err, deliver.ErrPermanent) && !errors.Is(err, deliver.ErrBreakerOpen)
}

// later queues r, a retry of row id's delivery, after its wait, unless
// the row has a write queued meanwhile (its delivery tries the row's
// older effects first) or the host is closing (the sweep delivers them).
func (b *background) later(id string, r queued) {
	time.AfterFunc(retryAfter[r.retry-1], func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed {
			return
		}
		if _, running := b.rows[id]; running {
			return
		}
		b.rows[id] = []queued{r}
		b.wg.Add(1)
		go b.run(id)
	})
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
