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
//
// One timer per instance is re-armed for every call (a call costs no timer
// allocation). A callback that runs late, for an earlier call, finds that
// call over or its deadline not reached, and does nothing.
type watchdog struct {
	flag     api.MutableGlobal // nil when the module is not instrumented
	mu       sync.Mutex
	timer    *time.Timer     // created on the first call
	active   bool            // a call is running
	deadline time.Time       // the running call's CallTimeout
	ctx      context.Context // the running call's context
	fired    error           // ErrTimeout or ErrCanceled once the watchdog fired
}

// onTimer is the timer's callback.
func (w *watchdog) onTimer() {
	w.mu.Lock()
	if w.active && w.fired == nil && !time.Now().Before(w.deadline) {
		w.fired = ErrTimeout
		w.flag.Set(1)
	}
	w.mu.Unlock()
}

// onDone is the callback of the running call's context.
func (w *watchdog) onDone() {
	w.mu.Lock()
	if w.active && w.fired == nil && w.ctx.Err() != nil {
		w.fired = ErrCanceled
		w.flag.Set(1)
	}
	w.mu.Unlock()
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
	w.active, w.deadline, w.ctx = true, time.Now().Add(d), ctx
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.onTimer)
	} else {
		w.timer.Reset(d)
	}
	w.mu.Unlock()
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, w.onDone)
	}
	err = f(ctx)
	w.timer.Stop()
	if stop != nil {
		stop()
	}
	w.mu.Lock()
	w.active, w.ctx = false, nil
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
