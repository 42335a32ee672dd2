package wasmtest_test

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/dynafold/dynafold/internal/wasmtest"
)

// The assembled modules are valid: wazero compiles them.
func TestModulesCompile(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	for name, b := range map[string][]byte{
		"raw":           wasmtest.RawPlugin{}.Bytes(),
		"raw-yield":     wasmtest.RawPlugin{Yield: true, StartLoop: true, InitializeLoop: true, EvolveLogTrap: true}.Bytes(),
		"extism":        wasmtest.ExtismPlugin{}.Bytes(),
		"extism-looper": wasmtest.ExtismPlugin{StartLoop: true, EvolveLogTrap: true}.Bytes(),
	} {
		if _, err := rt.CompileModule(ctx, b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
