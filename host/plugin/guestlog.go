package plugin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/dynafold/dynafold/internal/guestlog"
)

// The optional host import of ABI 1.1 (ABI.md §7): dynafold.log(level i32,
// ptr i32, len i32).
const (
	importModule = "dynafold"
	importLog    = "log"
)

// guestLogEvery is how often a plugin reports the guest log messages it
// dropped over its rate (tests shorten it).
var guestLogEvery = 10 * time.Second

// guestLogs is what an instance of a plugin with guest logging needs: the
// runtime's registry, where the host function finds the calling instance,
// and the plugin's sink.
type guestLogs struct {
	reg  *sync.Map // api.Module -> *instance
	sink *guestlog.Sink
}

// instantiateHostModule adds the dynafold host module to a runtime. Its log
// function serves every plugin of the runtime: it finds the calling instance
// in the runtime's registry, where only instances of plugins with guest
// logging enabled are; for the others a call is a no-op.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime, reg *sync.Map) error {
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(importModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			v, ok := reg.Load(m)
			if !ok {
				return // guest logging is off for this plugin
			}
			hostLog(ctx, v.(*instance), int32(stack[0]), uint32(stack[1]), uint32(stack[2]))
		}), []api.ValueType{i32, i32, i32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export(importLog).
		Instantiate(ctx)
	return err
}

// hostLog serves one dynafold.log call of in. A message outside the
// guest's memory is not a trap: it is ignored (with a warning within the
// rate), so that enabling logging never changes what a plugin computes.
func hostLog(ctx context.Context, in *instance, level int32, ptr, n uint32) {
	msg, ok := in.mem.Read(ptr, n)
	if !ok {
		in.logs.sink.Invalid(ctx, in.fn, fmt.Sprintf("message [%#x, +%d) is outside memory of %d bytes", ptr, n, in.mem.Size()))
		return
	}
	in.logs.sink.Log(ctx, guestlog.Level(level), in.fn, msg)
}

// importsLog reports whether a compiled module imports dynafold.log.
func importsLog(compiled wazero.CompiledModule) bool {
	for _, def := range compiled.ImportedFunctions() {
		if mod, name, _ := def.Import(); mod == importModule && name == importLog {
			return true
		}
	}
	return false
}

// checkLogImport validates an import from the dynafold module: log, with
// its signature.
func checkLogImport(def api.FunctionDefinition) error {
	_, name, _ := def.Import()
	if name != importLog {
		return fmt.Errorf("%w: imports %s.%s; the host's %q module has only %q (ABI.md §7)", ErrInvalidModule, importModule, name, importModule, importLog)
	}
	i32 := api.ValueTypeI32
	if want := []api.ValueType{i32, i32, i32}; !sameTypes(def.ParamTypes(), want) || len(def.ResultTypes()) != 0 {
		return fmt.Errorf("%w: import %s.%s has signature %s, want %s", ErrInvalidModule, importModule, importLog,
			signature(def.ParamTypes(), def.ResultTypes()), signature(want, nil))
	}
	return nil
}
