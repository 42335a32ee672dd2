package extism

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/internal/calls"
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

// Call calls export fn (a capability: "key", "evolve", "to_item", ...) with
// an encoded request and returns the encoded response (without the status
// byte), like host/plugin's Plugin.Call. Every failure is a
// *logic.CallError; its cause matches one of ErrTimeout, ErrMemoryLimit,
// ErrTrap, ErrBadOutput, ErrGuest, ErrCanceled or ErrClosed.
func (p *Plugin) Call(ctx context.Context, fn string, input []byte) ([]byte, error) {
	var out []byte
	err := p.call(ctx, fn,
		func(dst []byte) []byte { return append(dst, input...) },
		func(body []byte) error { out = body; return nil })
	return out, err
}

// call runs one call on an instance of the pool: encode appends the request
// to a scratch buffer, decode reads the response body. A runtime failure or
// a decode error discards the instance; a guest error (status 1) keeps it.
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
		kind := ErrTrap
		switch {
		case errors.Is(err, ErrTimeout):
			kind = ErrTimeout
		case errors.Is(err, ErrCanceled):
			kind = ErrCanceled
		}
		return p.wrap(fn, newCause(kind, err, "instantiate a new instance: %v", err))
	}
	in.scratch = encode(in.scratch[:0])
	body, err := p.invoke(ctx, in, fn, in.scratch)
	if err == nil {
		if derr := decode(body); derr != nil {
			err = p.wrap(fn, newCause(ErrBadOutput, derr, "malformed output: %v", derr))
		}
	} else if errors.Is(err, ErrGuest) {
		p.pool.Release(ctx, in) // the guest handled its failure
		p.pool.Counters.Failure()
		return err
	}
	if err != nil {
		p.pool.Discard(ctx, in)
		p.pool.Counters.Failure()
		// Debug: the failure is returned, and the caller reports it with
		// what it means (the row, the record); a bisect calls the failing
		// event many times, so a warning here would repeat it.
		p.cfg.Logger.Debug("plugin call failed; instance replaced", "plugin", p.name, "function", fn, "err", err)
		return err
	}
	if cap(in.scratch) > 1<<20 {
		in.scratch = nil // do not pin a huge request
	}
	p.pool.Release(ctx, in)
	return nil
}

func (p *Plugin) wrap(fn string, err error) *logic.CallError {
	return &logic.CallError{Plugin: p.name, Function: fn, Cause: err}
}

// classify turns a runtime error of a call into a *logic.CallError whose
// cause says what happened. ctx is the caller's context, cctx the call's
// (with CallTimeout), not yet canceled. The error says why the call ended:
// wazero stops a guest whose context ended with an exit error naming it,
// and a trap is a trap even when it came after the deadline (the guest was
// in a host function then). Only an error that says neither (the SDK's
// own, formatted without its cause) is read from the contexts.
func (p *Plugin) classify(ctx, cctx context.Context, fn string, in *instance, err error) error {
	var exit *sys.ExitError
	isExit := errors.As(err, &exit)
	stopped := isExit && (exit.ExitCode() == sys.ExitCodeDeadlineExceeded || exit.ExitCode() == sys.ExitCodeContextCanceled)
	if !isExit && !strings.HasPrefix(err.Error(), "wasm error: ") {
		stopped = cctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	}
	if stopped {
		if ctx.Err() != nil {
			return p.wrap(fn, newCause(ErrCanceled, err, "canceled: %v", context.Cause(ctx)))
		}
		return p.wrap(fn, newCause(ErrTimeout, err, "%s", p.cfg.TimeoutText()))
	}
	text := strings.TrimPrefix(err.Error(), "wasm error: ")
	// The guest's own message: an AssemblyScript abort (our handler) or a
	// PDK's error_set before a trap.
	msg := in.p.GetErrorWithContext(context.Background())
	if msg != "" && msg == err.Error() {
		// The SDK's error for a guest that set an error and returned.
		return p.wrap(fn, newCause(ErrGuest, err, "guest error: %s", msg))
	}
	lines := strings.Split(text, "\n")
	if msg != "" {
		lines[0] += ": " + msg
	}
	if all := text + msg; strings.Contains(all, "out of memory") || strings.Contains(all, "Allocation too large") ||
		strings.Contains(all, "memory limit") {
		return p.wrap(fn, newCause(ErrMemoryLimit, err, "memory limit of %d pages reached (%s)", p.cfg.MemoryLimitPages, lines[0]))
	}
	if isExit {
		return p.wrap(fn, newCause(ErrTrap, err, "trap: guest exited with code %d", exit.ExitCode()))
	}
	return p.wrap(fn, newCause(ErrTrap, err, "trap: %s", wasmstack.Short(text, msg)))
}
