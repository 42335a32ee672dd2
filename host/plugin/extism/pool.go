package extism

import (
	"context"
	"sync"
	"sync/atomic"
)

// pool hands out instances, one call at a time each. Slots are a semaphore
// of PoolSize tokens; an instance is created lazily when a caller holds a
// slot and no idle instance is left, and a discarded instance frees its slot
// for a fresh one.
type pool struct {
	slots  chan struct{}
	mu     sync.Mutex
	idle   []*instance
	closed bool
	create func(ctx context.Context) (*instance, error)
	stats  counters
}

func newPool(size int, create func(ctx context.Context) (*instance, error)) *pool {
	return &pool{slots: make(chan struct{}, size), create: create}
}

// adopt adds an instance created outside the pool (the one Load validated).
func (p *pool) adopt(ctx context.Context, in *instance) {
	p.slots <- struct{}{}
	p.stats.created.Add(1)
	p.stats.live.Add(1)
	p.release(ctx, p.take(in))
}

// acquire returns an instance for the caller's exclusive use, waiting for a
// free slot while respecting ctx.
func (p *pool) acquire(ctx context.Context) (*instance, error) {
	select {
	case p.slots <- struct{}{}:
	default:
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return p.take(in), nil
	}
	p.mu.Unlock()
	in, err := p.create(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.stats.created.Add(1)
	p.stats.live.Add(1)
	return p.take(in), nil
}

func (p *pool) take(in *instance) *instance {
	if in.busy.Swap(true) {
		panic("extism: pool handed out a busy instance")
	}
	p.stats.busy.Add(1)
	return in
}

func (p *pool) give(in *instance) {
	in.busy.Store(false)
	p.stats.busy.Add(-1)
}

// release returns a healthy instance to the pool.
func (p *pool) release(ctx context.Context, in *instance) {
	p.give(in)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		in.close(ctx)
		p.stats.live.Add(-1)
	} else {
		p.idle = append(p.idle, in)
		p.mu.Unlock()
	}
	<-p.slots
}

// discard closes an instance that failed; its slot serves a new one.
func (p *pool) discard(ctx context.Context, in *instance) {
	p.give(in)
	in.close(ctx)
	p.stats.live.Add(-1)
	p.stats.discarded.Add(1)
	<-p.slots
}

// close refuses new calls, waits (until ctx ends) for the calls in flight
// and closes the idle instances.
func (p *pool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
wait:
	for i := 0; i < cap(p.slots); i++ {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			break wait
		}
	}
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, in := range idle {
		in.close(ctx)
		p.stats.live.Add(-1)
	}
}

// Stats are counters of a plugin's pool and calls, for metrics (SPEC X1) and
// tests; the same fields as host/plugin's Stats.
type Stats struct {
	Live      int    // instances alive now (idle or busy)
	Busy      int    // instances serving a call now
	Created   uint64 // instances created since load
	Discarded uint64 // instances discarded after a failed call
	Calls     uint64 // calls made
	Failures  uint64 // calls that returned a *logic.CallError
}

type counters struct {
	live, busy                          atomic.Int64
	created, discarded, calls, failures atomic.Uint64
}

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats {
	c := &p.pool.stats
	return Stats{
		Live:      int(c.live.Load()),
		Busy:      int(c.busy.Load()),
		Created:   c.created.Load(),
		Discarded: c.discarded.Load(),
		Calls:     c.calls.Load(),
		Failures:  c.failures.Load(),
	}
}
