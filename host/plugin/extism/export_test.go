package extism

import (
	"context"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/abi"
)

// CallVersion calls dynafold_abi_version on a pooled instance: the cost of
// an Extism call that does nothing (BenchmarkCallOverhead).
func (p *Plugin) CallVersion(ctx context.Context) error {
	in, err := p.pool.Acquire(ctx, ErrClosed)
	if err != nil {
		return err
	}
	defer p.pool.Release(ctx, in)
	_, _, err = p.abiVersion(ctx, in)
	return err
}

// SetCloseOnContextDone turns wazero's close-on-context-done off (or on)
// for plugins loaded afterwards, to measure its cost: without it a timeout
// cannot stop a guest.
func SetCloseOnContextDone(on bool) { closeOnContextDone = on }

// CacheDirInUse returns the cache directory whose code served p, or that
// keeps the code compiled for it; "" when it compiled in memory.
func (p *Plugin) CacheDirInUse() string { return p.cacheDir }

// FillPoolForTest creates every instance of p's pool, holding them all at
// once, and folds req once on each (the memory benchmark's pool).
func (p *Plugin) FillPoolForTest(ctx context.Context, req *abi.EvolveRequest) error {
	var held []*instance
	defer func() {
		for _, in := range held {
			p.pool.Release(ctx, in)
		}
	}()
	for range p.cfg.PoolSize {
		in, err := p.pool.Acquire(ctx, ErrClosed)
		if err != nil {
			return err
		}
		held = append(held, in)
		body, err := p.invoke(ctx, in, abi.CapEvolve, abi.AppendEvolveRequest(nil, req))
		if err != nil {
			return err
		}
		if _, err := abi.DecodeEvolveResponse(body); err != nil {
			return err
		}
	}
	if s := p.Stats(); s.Live != p.cfg.PoolSize {
		return fmt.Errorf("%d live instances, want %d", s.Live, p.cfg.PoolSize)
	}
	return nil
}

// CacheHit reports whether p's compiled code came from its cache.
func (p *Plugin) CacheHit() bool { return p.cacheHit }

// SetGuestLogEveryForTest sets how often dropped guest log messages are
// reported, for plugins loaded afterwards, and returns a function restoring
// the previous interval.
func SetGuestLogEveryForTest(d time.Duration) (restore func()) {
	old := guestLogEvery
	guestLogEvery = d
	return func() { guestLogEvery = old }
}
