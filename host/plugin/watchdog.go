package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
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

// firedHook, when set (by tests), runs each time a watchdog fires, after it
// set the interrupt flag.
var firedHook atomic.Pointer[func()]

func runFiredHook() {
	if f := firedHook.Load(); f != nil {
		(*f)()
	}
}

// onTimer is the timer's callback.
func (w *watchdog) onTimer() {
	w.mu.Lock()
	fired := false
	if w.active && w.fired == nil && !time.Now().Before(w.deadline) {
		w.fired = ErrTimeout
		w.flag.Set(1)
		fired = true
	}
	w.mu.Unlock()
	if fired {
		runFiredHook()
	}
}

// onDone is the callback of the running call's context.
func (w *watchdog) onDone() {
	w.mu.Lock()
	fired := false
	if w.active && w.fired == nil && w.ctx.Err() != nil {
		w.fired = ErrCanceled
		w.flag.Set(1)
		fired = true
	}
	w.mu.Unlock()
	if fired {
		runFiredHook()
	}
}

// guarded runs f, bounded by d and ctx. fired is ErrTimeout or ErrCanceled
// when f failed because the watchdog interrupted it, nil otherwise (f
// succeeded, or failed on its own: a trap is a trap even when it came after
// the deadline).
//
// Without instrumentation the runtime was built with close-on-context-done,
// and the bound is the context passed to f: wazero stops the guest with an
// exit error naming the context's end.
func (in *instance) guarded(ctx context.Context, d time.Duration, f func(context.Context) error) (fired, err error) {
	w := &in.wd
	if w.flag == nil {
		cctx, cancel := context.WithTimeout(ctx, d)
		err = f(cctx)
		if err != nil {
			fired = contextStopped(ctx, cctx, err) // before cancel, which would end cctx
		}
		cancel()
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
		// The guest trapped at a loop head because the flag was set only if
		// it left interrupted there; any other failure is its own (it was
		// in a host function when the watchdog fired, and trapped before its
		// next loop head). Either way the flag is cleared, so an instance
		// whose call returned as the watchdog fired stays usable.
		if err != nil && uint32(w.flag.Get()) == interrupted {
			fired = w.fired
		}
		w.flag.Set(0)
		w.fired = nil
	}
	w.mu.Unlock()
	return fired, err
}

// contextStopped returns why wazero's close-on-context-done stopped a call
// of an uninstrumented module: ErrCanceled when the caller's ctx ended,
// ErrTimeout when cctx (ctx with the CallTimeout) did; nil when err is
// anything else, such as a trap, even one that came after the deadline. It
// must be called before cctx is canceled.
func contextStopped(ctx, cctx context.Context, err error) error {
	var exit *sys.ExitError
	if !errors.As(err, &exit) || cctx.Err() == nil {
		return nil
	}
	switch exit.ExitCode() {
	case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
		if ctx.Err() != nil {
			return ErrCanceled
		}
		return ErrTimeout
	}
	return nil
}
