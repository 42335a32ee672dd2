package plugin

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dynafold/dynafold/host/plugin/internal/determinism"
)

// Export names of the calling convention.
const (
	exportMemory  = "memory"
	exportVersion = "dynafold_abi_version"
	exportAlloc   = "dynafold_alloc"
)

// instance is one instantiated module. It is used by one call at a time.
type instance struct {
	mod     api.Module
	mem     api.Memory
	alloc   api.Function
	fns     map[string]api.Function // capability -> export
	out     *guestOutput
	rnd     *determinism.Rand
	stack   [2]uint64
	scratch []byte      // the encoded request, reused across calls
	busy    atomic.Bool // set while a call holds the instance
	wd      watchdog
	fn      string            // the export being called, for guest log records
	logs    *guestLogs        // nil unless the guest logs into the host
	budget  api.MutableGlobal // the loop budget; nil when the module is not instrumented
}

// newInstance instantiates compiled in the plugin's sandbox and runs its
// start function and _initialize, bounded by timeout and ctx as a call is.
// An instrumented module's start function was turned into an export
// (startExport) that runs under the watchdog; an uninstrumented module's
// start section runs inside instantiation, under a context with the
// timeout (its runtime closes modules whose context ends). A module that
// exports _start but not _initialize is a command, not a reactor, and is
// refused. With logs, the instance's dynafold.log calls reach logs.sink.
func newInstance(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule, out *guestOutput, logs *guestLogs, timeout time.Duration) (*instance, error) {
	rnd := &determinism.Rand{}
	rnd.Reset()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	mod, err := rt.InstantiateModule(cctx, compiled, moduleConfig(out, rnd, &determinism.Clock{}))
	if err != nil {
		fired := contextStopped(ctx, cctx, err)
		cancel()
		return nil, instantiateError(ctx, "start function", timeout, fired, err)
	}
	cancel()
	inst := &instance{
		mod:   mod,
		mem:   mod.Memory(),
		alloc: mod.ExportedFunction(exportAlloc),
		fns:   map[string]api.Function{},
		out:   out,
		rnd:   rnd,
		fn:    "_initialize",
	}
	if logs != nil {
		inst.logs = logs
		logs.reg.Store(mod, inst)
	}
	if g, ok := mod.ExportedGlobal(interruptGlobal).(api.MutableGlobal); ok {
		inst.wd.flag = g
	}
	if g, ok := mod.ExportedGlobal(budgetGlobal).(api.MutableGlobal); ok {
		inst.budget = g
	}
	for name := range compiled.ExportedFunctions() {
		if isCapability(name) {
			inst.fns[name] = mod.ExportedFunction(name)
		}
	}
	for _, init := range []struct{ export, what string }{{startExport, "start function"}, {"_initialize", "_initialize"}} {
		f := mod.ExportedFunction(init.export)
		if f == nil || (init.export == startExport && inst.wd.flag == nil) {
			continue
		}
		inst.fn = init.what
		fired, err := inst.guarded(ctx, timeout, func(ctx context.Context) error {
			_, err := f.Call(ctx)
			return err
		})
		if err != nil {
			inst.Close(ctx)
			return nil, instantiateError(ctx, init.what, timeout, fired, err)
		}
	}
	if mod.ExportedFunction("_initialize") == nil && mod.ExportedFunction("_start") != nil {
		inst.Close(ctx)
		return nil, fmt.Errorf("%w: a command module (exports _start, not _initialize); build the plugin with -buildmode=c-shared", ErrInvalidModule)
	}
	return inst, nil
}

// instantiateError says why instantiating a module failed in what (its
// start function or _initialize): fired (ErrTimeout, ErrCanceled) when it
// did not finish in time or its caller gave up, else err.
func instantiateError(ctx context.Context, what string, timeout time.Duration, fired, err error) error {
	switch fired {
	case ErrTimeout:
		return fmt.Errorf("%s: %w after %s (the call timeout): it did not finish: %w", what, ErrTimeout, timeout, err)
	case ErrCanceled:
		return fmt.Errorf("%s: %w: %v: %w", what, ErrCanceled, context.Cause(ctx), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// abiVersion calls dynafold_abi_version.
func (in *instance) abiVersion(ctx context.Context) (major, minor uint32, err error) {
	fn := in.mod.ExportedFunction(exportVersion)
	in.fn = exportVersion
	in.stack[0] = 0
	if err := fn.CallWithStack(ctx, in.stack[:]); err != nil {
		return 0, 0, err
	}
	v := uint32(in.stack[0])
	return v >> 16, v & 0xffff, nil
}

// invoke calls capability fn with input and returns the raw output (status
// byte included): a view of guest memory, valid until the next call into
// the instance. A runtime error (trap, exit,
// closed by the context) comes back as is; an output or allocation out of
// bounds as an ErrBadOutput cause.
func (in *instance) invoke(ctx context.Context, fn string, input []byte) ([]byte, error) {
	f := in.fns[fn]
	in.fn = fn
	in.out.reset()
	in.rnd.Reset()
	var ptr uint32
	if len(input) > 0 {
		in.stack[0] = uint64(len(input))
		if err := in.alloc.CallWithStack(ctx, in.stack[:]); err != nil {
			return nil, err
		}
		ptr = uint32(in.stack[0])
		if !in.mem.Write(ptr, input) {
			return nil, newCause(ErrBadOutput, nil, "malformed output: %s(%d) returned %#x, outside memory of %d bytes",
				exportAlloc, len(input), ptr, in.mem.Size())
		}
	}
	in.stack[0], in.stack[1] = uint64(ptr), uint64(len(input))
	if err := f.CallWithStack(ctx, in.stack[:]); err != nil {
		return nil, err
	}
	res := in.stack[0]
	outPtr, outLen := uint32(res>>32), uint32(res)
	view, ok := in.mem.Read(outPtr, outLen)
	if !ok {
		return nil, newCause(ErrBadOutput, nil, "malformed output: result buffer [%#x, +%d) is outside memory of %d bytes",
			outPtr, outLen, in.mem.Size())
	}
	if outLen == 0 {
		return nil, newCause(ErrBadOutput, nil, "malformed output: empty result (no status byte)")
	}
	return view, nil
}

// Close closes the instance's module (instpool.Instance).
func (in *instance) Close(ctx context.Context) {
	if in.logs != nil {
		in.logs.reg.Delete(in.mod)
	}
	_ = in.mod.Close(ctx)
}

// Busy is the flag the pool sets while a call holds the instance.
func (in *instance) Busy() *atomic.Bool { return &in.busy }

// capabilities lists every capability export name of the convention.
var capabilities = []string{"describe", "key", "evolve", "initial", "terminal", "to_item", "effects", "self_test"}

func isCapability(name string) bool {
	for _, c := range capabilities {
		if c == name {
			return true
		}
	}
	return false
}

// checkExports validates the exports of a compiled module against the calling
// convention.
func checkExports(compiled wazero.CompiledModule) error {
	fns := compiled.ExportedFunctions()
	if _, ok := compiled.ExportedMemories()[exportMemory]; !ok {
		return fmt.Errorf("%w: no exported memory %q", ErrInvalidModule, exportMemory)
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	want := map[string][2][]api.ValueType{
		exportVersion: {nil, {i32}},
		exportAlloc:   {{i32}, {i32}},
	}
	for _, c := range capabilities {
		want[c] = [2][]api.ValueType{{i32, i32}, {i64}}
	}
	for _, name := range []string{exportVersion, exportAlloc, "describe", "key", "evolve"} {
		if fns[name] == nil {
			return fmt.Errorf("%w: missing export %q", ErrInvalidModule, name)
		}
	}
	for name, def := range fns {
		sig, ok := want[name]
		if !ok {
			continue
		}
		if !sameTypes(def.ParamTypes(), sig[0]) || !sameTypes(def.ResultTypes(), sig[1]) {
			return fmt.Errorf("%w: export %q has signature %s, want %s", ErrInvalidModule, name,
				signature(def.ParamTypes(), def.ResultTypes()), signature(sig[0], sig[1]))
		}
	}
	for _, def := range compiled.ImportedFunctions() {
		switch mod, name, _ := def.Import(); mod {
		case "wasi_snapshot_preview1":
		case importModule:
			if err := checkLogImport(def); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: imports %s.%s; the host provides wasi_snapshot_preview1 and %s.%s only", ErrInvalidModule, mod, name, importModule, importLog)
		}
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func signature(params, results []api.ValueType) string {
	s := "("
	for i, p := range params {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(p)
	}
	s += ") -> ("
	for i, r := range results {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(r)
	}
	return s + ")"
}
