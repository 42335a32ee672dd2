package plugin

import (
	"context"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// watchdog interrupts the running call of one instance when its time is up or
// its caller's context ends, by setting the module's interrupt global (see
// instrument): the guest traps at its next loop head.
type watchdog struct {
	flag  api.MutableGlobal // nil when the module is not instrumented
	mu    sync.Mutex
	seq   uint64 // the current call; a late timer of an earlier call is ignored
	fired error  // ErrTimeout or ErrCanceled once the watchdog fired
}

// guarded runs f, bounded by d and ctx. fired is ErrTimeout or ErrCanceled
// when f failed because the watchdog interrupted it, nil otherwise.
//
// Without instrumentation the runtime was built with close-on-context-done,
// and the bound is the context passed to f.
func (in *instance) guarded(ctx context.Context, d time.Duration, f func(context.Context) error) (fired, err error) {
	w := &in.wd
	if w.flag == nil {
		cctx, cancel := context.WithTimeout(ctx, d)
		err = f(cctx)
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			fired = ErrCanceled
		case cctx.Err() != nil:
			fired = ErrTimeout
		}
		return fired, err
	}
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	fire := func(reason error) {
		w.mu.Lock()
		if w.seq == seq && w.fired == nil {
			w.fired = reason
			w.flag.Set(1)
		}
		w.mu.Unlock()
	}
	t := time.AfterFunc(d, func() { fire(ErrTimeout) })
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { fire(ErrCanceled) })
	}
	err = f(ctx)
	t.Stop()
	if stop != nil {
		stop()
	}
	w.mu.Lock()
	w.seq++
	if w.fired != nil {
		w.flag.Set(0) // fired as the call returned: the instance stays usable
		if err != nil {
			fired = w.fired
		}
		w.fired = nil
	}
	w.mu.Unlock()
	return fired, err
}
