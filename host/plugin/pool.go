package plugin

import (
	"context"
	"sync"
)

// pool hands out instances, one call at a time each. Slots are a semaphore
// of PoolSize tokens; an instance is created lazily when a caller holds a slot
// and no idle instance is left, and a discarded instance frees its slot for a
// fresh one.
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

// acquire returns an instance for the caller's exclusive use, waiting for a
// free slot while respecting ctx. Instantiation errors come back as is.
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

// take marks in busy; finding it busy already would mean two calls share an
// instance, which the pool must never allow.
func (p *pool) take(in *instance) *instance {
	if in.busy.Swap(true) {
		panic("plugin: pool handed out a busy instance")
	}
	p.stats.busy.Add(1)
	return in
}

// give marks in idle again.
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
// and closes the idle instances. It reports whether every call finished.
func (p *pool) close(ctx context.Context) bool {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	drained := true
	for i := 0; i < cap(p.slots); i++ {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			drained = false
		}
		if !drained {
			break
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
	return drained
}
