package extism

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"

	"github.com/dynafold/dynafold/host/plugin/internal/determinism"
)

// instance is one extism.Plugin (the guest module and its own Extism
// kernel). It is used by one call at a time.
type instance struct {
	p       *extism.Plugin
	rnd     *determinism.Rand
	scratch []byte // the encoded request, reused across calls
	// kernelBase is the size of the Extism kernel's memory when the
	// instance was created: what is left under the limit holds a request.
	kernelBase uint32
	busy       atomic.Bool // set while a call holds the instance
	fn         string      // the export being called, for guest log records
	// ctx is the running call's context (with its CallTimeout), which guest
	// log records carry; nil between calls.
	ctx context.Context
}

// newInstance instantiates the compiled plugin in the sandbox, its start
// function bounded by CallTimeout and ctx (its _initialize, which the SDK
// runs before the first call, is bounded as that call is): no
// filesystem, network, environment or arguments; with WASI, the wall clock
// frozen at the epoch, a monotonic clock that moves only when the guest
// sleeps (determinism.Clock) and a deterministic
// random source reset before every call (as host/plugin does).
func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	rnd := &determinism.Rand{}
	rnd.Reset()
	clk := &determinism.Clock{}
	mc := wazero.NewModuleConfig().
		WithRandSource(rnd).
		WithWalltime(determinism.Epoch, sys.ClockResolution(1000)).
		WithNanotime(clk.Nanotime, sys.ClockResolution(1)).
		WithNanosleep(clk.Nanosleep)
	// The module's start function runs while it is instantiated: bounded
	// like a call (the runtime closes a module whose context ends).
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	ep, err := p.compiled.Instance(cctx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		err = p.instantiateError(ctx, cctx, err)
		cancel()
		return nil, err
	}
	cancel()
	in := &instance{p: ep, rnd: rnd, fn: "_initialize"}
	ep.SetLogger(in.logger(p.logs))
	if mem := ep.Memory(); mem != nil {
		in.kernelBase = mem.Size()
	}
	return in, nil
}

// Close closes the Extism instance (instpool.Instance).
func (in *instance) Close(ctx context.Context) { _ = in.p.Close(ctx) }

// Busy is the flag the pool sets while a call holds the instance.
func (in *instance) Busy() *atomic.Bool { return &in.busy }

// abiVersion calls dynafold_abi_version, whose Extism return code is
// major<<16 | minor.
func (p *Plugin) abiVersion(ctx context.Context, in *instance) (major, minor uint32, err error) {
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	in.fn, in.ctx = exportVersion, cctx
	rc, _, err := in.p.CallWithContext(cctx, exportVersion, nil)
	in.ctx = nil
	if err != nil {
		return 0, 0, p.classify(ctx, cctx, exportVersion, in, err)
	}
	return rc >> 16, rc & 0xffff, nil
}

// invoke runs one call on in and returns the response body (the output
// without its status byte). Every failure is a *logic.CallError; the caller
// discards the instance unless the cause is ErrGuest.
func (p *Plugin) invoke(ctx context.Context, in *instance, fn string, input []byte) ([]byte, error) {
	if room := uint64(p.cfg.MemoryLimitPages)*65536 - uint64(in.kernelBase); uint64(len(input)) >= room {
		// The Extism kernel holds the request in its own memory, under the
		// same limit; the SDK would pass the guest an empty input.
		return nil, p.wrap(fn, newCause(ErrMemoryLimit, nil, "memory limit of %d pages reached: the Extism kernel cannot hold a %d-byte request",
			p.cfg.MemoryLimitPages, len(input)))
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	in.rnd.Reset()
	in.fn, in.ctx = fn, cctx
	rc, out, err := in.p.CallWithContext(cctx, fn, input)
	in.ctx = nil
	if err != nil {
		err = p.classify(ctx, cctx, fn, in, err)
	}
	cancel()
	var body []byte
	if err == nil {
		body, err = p.body(fn, rc, out)
	}
	if err != nil && !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrCanceled) && p.kernelExhausted(in) {
		// The Extism kernel holds the request and the response in its own
		// memory, under the same limit: when it is full, the guest sees a
		// truncated request (or none) and fails in its own words.
		return nil, p.wrap(fn, newCause(ErrMemoryLimit, err, "memory limit of %d pages reached: the Extism kernel cannot hold a %d-byte request and its response (%v)",
			p.cfg.MemoryLimitPages, len(input), err))
	}
	return body, err
}

// body checks the output's status byte and returns the response it carries.
func (p *Plugin) body(fn string, rc uint32, out []byte) ([]byte, error) {
	if rc != 0 {
		return nil, p.wrap(fn, newCause(ErrGuest, nil, "guest error: %s returned %d without an error message", fn, int32(rc)))
	}
	if len(out) == 0 {
		return nil, p.wrap(fn, newCause(ErrBadOutput, nil, "malformed output: empty result (no status byte)"))
	}
	switch out[0] {
	case statusOK:
		return out[1:], nil
	case statusError:
		return nil, p.wrap(fn, newCause(ErrGuest, nil, "guest error: %s", out[1:]))
	}
	return nil, p.wrap(fn, newCause(ErrBadOutput, nil, "malformed output: status byte %#x", out[0]))
}

// kernelExhausted reports whether the instance's Extism kernel memory is at
// (or within 1/16 of) the memory limit.
func (p *Plugin) kernelExhausted(in *instance) bool {
	mem := in.p.Memory()
	if mem == nil {
		return false
	}
	return determinism.NearLimit(uint64(mem.Size())/65536, uint64(p.cfg.MemoryLimitPages))
}

// instantiateError says why instantiating failed: the start function did
// not finish within CallTimeout (ErrTimeout) or the caller gave up
// (ErrCanceled), read from the error as for a call; else err as is. cctx
// is ctx with CallTimeout, not yet canceled.
func (p *Plugin) instantiateError(ctx, cctx context.Context, err error) error {
	var exit *sys.ExitError
	if !errors.As(err, &exit) || cctx.Err() == nil ||
		(exit.ExitCode() != sys.ExitCodeDeadlineExceeded && exit.ExitCode() != sys.ExitCodeContextCanceled) {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("start function: %w: %v: %w", ErrCanceled, context.Cause(ctx), err)
	}
	return fmt.Errorf("start function: %w after %s (the call timeout): it did not finish: %w", ErrTimeout, p.cfg.CallTimeout, err)
}
