// Package instpool is the instance pool every plugin transport uses: one
// call at a time per instance, instances created lazily up to a size,
// discarded after a failure and closed when drained.
package instpool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Instance is what a pool holds: a plugin instance with a busy flag the pool
// sets while a call holds it, and a Close.
type Instance interface {
	comparable
	Busy() *atomic.Bool
	Close(ctx context.Context)
}

// ErrClosed is returned by Acquire on a closed pool.
var ErrClosed = errors.New("pool closed")

// Pool hands out instances, one call at a time each. Slots are a semaphore
// of size tokens; an instance is created lazily when a caller holds a slot
// and no idle instance is left, and a discarded instance frees its slot for
// a fresh one.
type Pool[T Instance] struct {
	slots  chan struct{}
	mu     sync.Mutex
	idle   []T
	closed bool
	create func(ctx context.Context) (T, error)
	// Counters are the pool's and its calls' counters.
	Counters Counters
}

// New returns a pool of size instances made by create.
func New[T Instance](size int, create func(ctx context.Context) (T, error)) *Pool[T] {
	return &Pool[T]{slots: make(chan struct{}, size), create: create}
}

// Acquire returns an instance for the caller's exclusive use, waiting for a
// free slot while respecting ctx. Instantiation errors come back as is; a
// closed pool answers closedErr.
func (p *Pool[T]) Acquire(ctx context.Context, closedErr error) (T, error) {
	var zero T
	select {
	case p.slots <- struct{}{}:
	default:
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return zero, closedErr
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
		return zero, err
	}
	p.Counters.created.Add(1)
	p.Counters.live.Add(1)
	return p.take(in), nil
}

// Adopt adds an instance created outside the pool (the one Load validated).
func (p *Pool[T]) Adopt(ctx context.Context, in T) {
	p.slots <- struct{}{}
	p.Counters.created.Add(1)
	p.Counters.live.Add(1)
	p.Release(ctx, p.take(in))
}

// take marks in busy; finding it busy already would mean two calls share an
// instance, which the pool must never allow.
func (p *Pool[T]) take(in T) T {
	if in.Busy().Swap(true) {
		panic("plugin: pool handed out a busy instance")
	}
	p.Counters.busy.Add(1)
	return in
}

func (p *Pool[T]) give(in T) {
	in.Busy().Store(false)
	p.Counters.busy.Add(-1)
}

// Release returns a healthy instance to the pool.
func (p *Pool[T]) Release(ctx context.Context, in T) {
	p.give(in)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		in.Close(ctx)
		p.Counters.live.Add(-1)
	} else {
		p.idle = append(p.idle, in)
		p.mu.Unlock()
	}
	<-p.slots
}

// Discard closes an instance that failed; its slot serves a new one.
func (p *Pool[T]) Discard(ctx context.Context, in T) {
	p.give(in)
	in.Close(ctx)
	p.Counters.live.Add(-1)
	p.Counters.discarded.Add(1)
	<-p.slots
}

// Close refuses new calls, waits (until ctx ends) for the calls in flight
// and closes the idle instances. It reports whether every call finished.
func (p *Pool[T]) Close(ctx context.Context) bool {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	drained := true
	for i := 0; i < cap(p.slots) && drained; i++ {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			drained = false
		}
	}
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, in := range idle {
		in.Close(ctx)
		p.Counters.live.Add(-1)
	}
	return drained
}

// Stats are counters of a plugin's pool and calls, for metrics and
// tests.
type Stats struct {
	Live      int    // instances alive now (idle or busy)
	Busy      int    // instances serving a call now
	Created   uint64 // instances created since load
	Discarded uint64 // instances discarded after a failed call
	Calls     uint64 // calls made
	Failures  uint64 // calls that returned a *logic.CallError
}

// Counters count a pool's instances and calls.
type Counters struct {
	live, busy                          atomic.Int64
	created, discarded, calls, failures atomic.Uint64
}

// Call counts a call; Failure a failed one.
func (c *Counters) Call()    { c.calls.Add(1) }
func (c *Counters) Failure() { c.failures.Add(1) }

// Created returns how many instances were created.
func (c *Counters) Created() uint64 { return c.created.Load() }

// Snapshot returns the counters' values.
func (c *Counters) Snapshot() Stats {
	return Stats{
		Live:      int(c.live.Load()),
		Busy:      int(c.busy.Load()),
		Created:   c.created.Load(),
		Discarded: c.discarded.Load(),
		Calls:     c.calls.Load(),
		Failures:  c.failures.Load(),
	}
}
