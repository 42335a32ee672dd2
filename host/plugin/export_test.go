package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/abi"
)

// SetInstrumentForTest turns the loop instrumentation off (false) or on,
// so benchmarks can compare with wazero's close-on-context-done.
func SetInstrumentForTest(on bool) { skipInstrument = !on }

// SetGuestLogEveryForTest sets how often dropped guest log messages are
// reported and returns a function restoring the previous interval.
func SetGuestLogEveryForTest(d time.Duration) (restore func()) {
	old := guestLogEvery
	guestLogEvery = d
	return func() { guestLogEvery = old }
}

// CacheDirInUse returns the cache directory whose code served p, or that
// keeps the code compiled for it; "" when it compiled in memory.
func CacheDirInUse(p *Plugin) string { return p.cacheDir }

// FillPoolForTest creates every instance of p's pool, holding them all at
// once, and folds req once on each (the memory benchmark's pool).
func (p *Plugin) FillPoolForTest(ctx context.Context, req *abi.EvolveRequest) error {
	var held []*instance
	defer func() {
		for _, in := range held {
			if in != nil {
				p.pool.Release(ctx, in)
			}
		}
	}()
	for range p.cfg.PoolSize {
		in, err := p.pool.Acquire(ctx, ErrClosed)
		if err != nil {
			return err
		}
		held = append(held, in)
		var out []byte
		if _, err := in.guarded(ctx, p.cfg.CallTimeout, func(ctx context.Context) (err error) {
			out, err = in.invoke(ctx, abi.CapEvolve, abi.AppendEvolveRequest(nil, req))
			return err
		}); err != nil {
			return err
		}
		body, err := p.body(abi.CapEvolve, out)
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

// ClassifyForTest classifies err as a call of fn that failed without an
// instance (as when a new instance could not be started).
func (p *Plugin) ClassifyForTest(ctx context.Context, fn string, err error) error {
	return p.classify(ctx, fn, nil, nil, err)
}

// CallEveryInstanceForTest checks out every instance of p's pool at once
// (creating the missing ones, so they are all distinct), then calls fn with
// input on each, through the same path as Call, and returns the responses
// in the order of the instances.
func (p *Plugin) CallEveryInstanceForTest(ctx context.Context, fn string, input []byte) ([][]byte, error) {
	var held []*instance
	defer func() {
		for _, in := range held {
			if in != nil {
				p.pool.Release(ctx, in)
			}
		}
	}()
	for range p.cfg.PoolSize {
		in, err := p.pool.Acquire(ctx, ErrClosed)
		if err != nil {
			return nil, err
		}
		held = append(held, in)
	}
	outs := make([][]byte, len(held))
	for i, in := range held {
		held[i] = nil // callOn gives it back
		err := p.callOn(ctx, in, fn,
			func(dst []byte) []byte { return append(dst, input...) },
			func(body []byte) error { outs[i] = append([]byte(nil), body...); return nil })
		if err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// SetWatchdogFiredHookForTest makes f run each time a call's watchdog
// fires (after it set the interrupt flag) and returns a function restoring
// the previous hook.
func SetWatchdogFiredHookForTest(f func()) (restore func()) {
	old := firedHook.Swap(&f)
	return func() { firedHook.Store(old) }
}

// CacheHit reports whether p's compiled code came from its cache.
func CacheHit(p *Plugin) bool { return p.cacheHit }

// SetStartTimeoutForTest makes d, instead of CallTimeout, bound the start
// of every instance and Load's calls (0 restores CallTimeout), and returns
// a function restoring the previous bound.
func SetStartTimeoutForTest(d time.Duration) (restore func()) {
	old := startTimeoutForTest.Swap(int64(d))
	return func() { startTimeoutForTest.Store(old) }
}
