//go:build !wasip1

package examples_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// module drives a plugin module with the raw calling convention of ABI.md,
// directly on wazero (the project's runtime lives in host/plugin; this is a
// minimal, independent driver so the guest side is tested on its own).
type module struct {
	rt    wazero.Runtime
	m     api.Module
	alloc api.Function
	fns   map[string]api.Function
	stack []uint64
}

var runtimeCache = wazero.NewCompilationCache()

func load(tb testing.TB, pkgDir string) *module {
	tb.Helper()
	ctx := context.Background()
	bin := wasmbuild.Build(tb, pkgDir)
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(runtimeCache))
	tb.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, bin)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize").WithName("").WithStderr(os.Stderr))
	if err != nil {
		tb.Fatal(err)
	}
	md := &module{rt: rt, m: m, alloc: m.ExportedFunction("dynafold_alloc"), fns: map[string]api.Function{}, stack: make([]uint64, 2)}
	if md.alloc == nil {
		tb.Fatal("no dynafold_alloc export")
	}
	for _, name := range []string{"describe", "key", "evolve", "initial", "terminal", "to_item", "effects"} {
		if f := m.ExportedFunction(name); f != nil {
			md.fns[name] = f
		}
	}
	return md
}

// call runs an export on an encoded request and returns the response after
// its status byte; status 1 is returned as an error carrying the message.
// The returned slice aliases guest memory until the next call.
func (md *module) call(export string, in []byte) ([]byte, error) {
	ctx := context.Background()
	f := md.fns[export]
	if f == nil {
		return nil, fmt.Errorf("no export %q", export)
	}
	md.stack[0] = uint64(len(in))
	if err := md.alloc.CallWithStack(ctx, md.stack); err != nil {
		return nil, err
	}
	ptr := uint32(md.stack[0])
	if len(in) > 0 && !md.m.Memory().Write(ptr, in) {
		return nil, fmt.Errorf("write out of range")
	}
	md.stack[0], md.stack[1] = uint64(ptr), uint64(len(in))
	if err := f.CallWithStack(ctx, md.stack); err != nil {
		return nil, err
	}
	res := md.stack[0]
	out, ok := md.m.Memory().Read(uint32(res>>32), uint32(res))
	if !ok || len(out) == 0 {
		return nil, fmt.Errorf("result %#x out of range", res)
	}
	if out[0] != 0 {
		return nil, fmt.Errorf("status %d: %s", out[0], out[1:])
	}
	return out[1:], nil
}

func (md *module) version(tb testing.TB) uint32 {
	r, err := md.m.ExportedFunction("dynafold_abi_version").Call(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return uint32(r[0])
}

// wasmHandler is an abi.Handler over a module, for differential tests.
type wasmHandler struct {
	tb testing.TB
	md *module
}

func (w wasmHandler) Describe() abi.Description {
	out, err := w.md.call("describe", nil)
	if err != nil {
		w.tb.Fatal(err)
	}
	d, err := abi.DecodeDescription(out)
	if err != nil {
		w.tb.Fatal(err)
	}
	return *d
}

func (w wasmHandler) Key(q *abi.KeyRequest) (*abi.KeyResponse, error) {
	out, err := w.md.call("key", abi.AppendKeyRequest(nil, q))
	if err != nil {
		return nil, err
	}
	return abi.DecodeKeyResponse(out)
}

func (w wasmHandler) Evolve(q *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	out, err := w.md.call("evolve", abi.AppendEvolveRequest(nil, q))
	if err != nil {
		return nil, err
	}
	return abi.DecodeEvolveResponse(out)
}

var _ abi.Handler = wasmHandler{}
