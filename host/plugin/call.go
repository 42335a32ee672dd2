package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/internal/calls"
	"github.com/dynafold/dynafold/host/plugin/internal/determinism"
	"github.com/dynafold/dynafold/host/plugin/internal/wasmstack"
)

// Output status bytes of the calling convention.
const (
	statusOK    = 0
	statusError = 1
)

// Key calls the plugin's key export.
func (p *Plugin) Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	c := calls.Key{Req: req}
	if err := p.call(ctx, abi.CapKey, c.Encode, c.Decode); err != nil {
		return nil, err
	}
	return c.Resp, nil
}

// Evolve calls the plugin's evolve export.
func (p *Plugin) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	c := calls.Evolve{Req: req}
	if err := p.call(ctx, abi.CapEvolve, c.Encode, c.Decode); err != nil {
		return nil, err
	}
	return c.Resp, nil
}

// Call calls export fn (a capability: "key", "evolve", "to_item", ...)
// with an encoded request and returns the encoded response (without the
// status byte). It is the raw form of Key and Evolve, for the optional
// exports. Every failure is a *logic.CallError; its cause matches one of
// ErrTimeout, ErrMemoryLimit, ErrLoopBudget, ErrTrap, ErrBadOutput,
// ErrGuest, ErrCanceled or ErrClosed.
func (p *Plugin) Call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	var out []byte
	err := p.call(ctx, fn,
		func(dst []byte) []byte { return append(dst, input...) },
		func(body []byte) error { out = append([]byte(nil), body...); return nil })
	return out, err
}

// call runs one call on an instance of the pool: encode appends the request
// to a scratch buffer, decode reads the response body, which is a view of
// guest memory valid only during decode. A runtime failure or a decode error
// discards the instance.
func (p *Plugin) call(ctx context.Context, fn string, encode func([]byte) []byte, decode func([]byte) error) error {
	if p.closed.Load() {
		return p.wrap(fn, ErrClosed)
	}
	if !p.exports[fn] {
		return p.wrap(fn, fmt.Errorf("%w: the plugin does not export %q", ErrInvalidModule, fn))
	}
	p.pool.Counters.Call()
	in, err := p.pool.Acquire(ctx, ErrClosed)
	if err != nil {
		p.pool.Counters.Failure()
		if errors.Is(err, ErrClosed) {
			return p.wrap(fn, ErrClosed)
		}
		if ctx.Err() != nil {
			return p.wrap(fn, newCause(ErrCanceled, err, "canceled while waiting for an instance: %v", err))
		}
		return p.classify(ctx, fn, nil, nil, fmt.Errorf("instantiate a new instance: %w", err))
	}
	return p.callOn(ctx, in, fn, encode, decode)
}

// callOn runs one call on in, an instance the caller acquired from the
// pool, and gives it back: released after a success or a guest error,
// discarded after any other failure.
func (p *Plugin) callOn(ctx context.Context, in *instance, fn string, encode func([]byte) []byte, decode func([]byte) error) error {
	in.scratch = encode(in.scratch[:0])
	in.armLoopBudget(loopBudgetTicks(p.cfg.MaxLoopIterations))
	var out []byte
	fired, err := in.guarded(ctx, p.cfg.CallTimeout, func(ctx context.Context) (err error) {
		out, err = in.invoke(ctx, fn, in.scratch)
		return err
	})
	if err == nil {
		var body []byte
		if body, err = p.body(fn, out); err == nil {
			if derr := decode(body); derr != nil {
				err = p.badOutput(fn, derr)
			}
		} else if errors.Is(err, ErrGuest) {
			p.pool.Release(ctx, in) // the guest handled its failure
			p.pool.Counters.Failure()
			return err
		}
	}
	if err != nil {
		cerr := p.classify(ctx, fn, in, fired, err)
		p.pool.Discard(ctx, in)
		p.pool.Counters.Failure()
		// Debug: the failure is returned, and the caller reports it with
		// what it means (the row, the record); a bisect calls the failing
		// event many times, so a warning here would repeat it.
		p.cfg.Logger.Debug("plugin call failed; instance replaced", "plugin", p.name, "function", fn, "err", cerr)
		return cerr
	}
	if cap(in.scratch) > 1<<20 {
		in.scratch = nil // do not pin a huge request
	}
	p.pool.Release(ctx, in)
	return nil
}

// body checks an output's status byte and returns the response it carries.
func (p *Plugin) body(fn string, out []byte) ([]byte, error) {
	switch out[0] {
	case statusOK:
		return out[1:], nil
	case statusError:
		return nil, p.wrap(fn, newCause(ErrGuest, nil, "guest error: %s", out[1:]))
	}
	return nil, p.wrap(fn, newCause(ErrBadOutput, nil, "malformed output: status byte %#x", out[0]))
}

func (p *Plugin) wrap(fn string, err error) *logic.CallError {
	return &logic.CallError{Plugin: p.name, Function: fn, Cause: err}
}

func (p *Plugin) badOutput(fn string, err error) error {
	return p.wrap(fn, newCause(ErrBadOutput, err, "malformed output: %v", err))
}

// classify turns a runtime error of a call into a *logic.CallError whose
// cause says what happened. ctx is the caller's context (without the
// CallTimeout); fired is what the watchdog reported (ErrTimeout,
// ErrCanceled or nil).
func (p *Plugin) classify(ctx context.Context, fn string, in *instance, fired, err error) error {
	var ce *logic.CallError
	if errors.As(err, &ce) {
		return ce
	}
	var c *cause
	if errors.As(err, &c) {
		return p.wrap(fn, c)
	}
	if fired == nil && errors.Is(err, ErrTimeout) {
		fired = ErrTimeout // a new instance's start function or _initialize ran out of time
	}
	if fired == nil && errors.Is(err, ErrCanceled) {
		fired = ErrCanceled // the caller gave up while a new instance started
	}
	var reason string
	if in != nil {
		reason = in.out.reason()
	}
	var exit *sys.ExitError
	switch {
	case fired == ErrTimeout:
		return p.wrap(fn, newCause(ErrTimeout, err, "%s", p.cfg.TimeoutText()))
	case fired == ErrCanceled:
		return p.wrap(fn, newCause(ErrCanceled, err, "canceled: %v", context.Cause(ctx)))
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded,
		errors.Is(err, context.DeadlineExceeded):
		if ctx.Err() != nil { // the caller's own deadline, not CallTimeout
			return p.wrap(fn, newCause(ErrCanceled, err, "canceled: %v", ctx.Err()))
		}
		return p.wrap(fn, newCause(ErrTimeout, err, "%s", p.cfg.TimeoutText()))
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled,
		errors.Is(err, context.Canceled):
		return p.wrap(fn, newCause(ErrCanceled, err, "canceled: %v", context.Canceled))
	case p.loopBudgetExhausted(in):
		return p.wrap(fn, newCause(ErrLoopBudget, err, "loop budget of %d iterations exhausted", p.cfg.MaxLoopIterations))
	case p.memoryExhausted(in, reason):
		return p.wrap(fn, newCause(ErrMemoryLimit, err, "memory limit of %d pages reached (%s)", p.cfg.MemoryLimitPages, orText(reason, err)))
	case errors.As(err, &exit):
		if reason != "" {
			return p.wrap(fn, newCause(ErrTrap, err, "trap: guest exited with code %d: %s", exit.ExitCode(), reason))
		}
		return p.wrap(fn, newCause(ErrTrap, err, "trap: guest exited with code %d", exit.ExitCode()))
	}
	return p.wrap(fn, newCause(ErrTrap, err, "trap: %s", trapText(err, reason)))
}

// memoryExhausted reports whether a failure is the memory limit: a Go guest
// (and the C SDK) says "out of memory" before it traps, Rust's standard
// library "memory allocation of N bytes failed"; a guest that says nothing
// (AssemblyScript: the allocator aborts once memory.grow fails) counts when
// its memory is within 1/16 of the limit.
func (p *Plugin) memoryExhausted(in *instance, reason string) bool {
	if strings.Contains(reason, "out of memory") ||
		strings.HasPrefix(reason, "memory allocation of ") && strings.HasSuffix(reason, " failed") {
		return true
	}
	if reason != "" || in == nil || in.mem == nil {
		return false
	}
	return determinism.NearLimit(uint64(in.mem.Size())/65536, uint64(p.cfg.MemoryLimitPages))
}

// trapText shortens wazero's "wasm error: unreachable\nwasm stack trace:
// ..." to one line: "unreachable", what the guest said before trapping (a
// Go guest's "panic: ..." line), and the guest's own frames, demangled
// (wasmstack.Short).
func trapText(err error, reason string) string {
	return wasmstack.Short(err.Error(), reason)
}

func orText(reason string, err error) string {
	if reason != "" {
		return reason
	}
	return strings.SplitN(err.Error(), "\n", 2)[0]
}

// TimeoutText is the text of a call's timeout error, for every transport:
// the timeout, the setting it came from and what usually causes it.
func (c Config) TimeoutText() string {
	return fmt.Sprintf("timeout after %s (%s)"+timeoutHint, c.CallTimeout, c.callTimeoutName())
}

// timeoutHint follows "timeout after 5s (plugins.callTimeout)" in a call's
// error: what usually causes it.
const timeoutHint = ": the plugin did not return; look for an endless loop, or raise the timeout only for honest work"
