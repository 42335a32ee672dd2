package plugin

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func TestW4_InstrumentedModuleIsValid(t *testing.T) {
	wasm := wasmbuild.Build(t, "testdata/loop")
	code, err := instrument(wasm)
	if err != nil {
		t.Fatal(err)
	}
	check := loopCheck(0, 0, 0, 0)[:1] // global.get: present once per loop at least
	if !bytes.Contains(code, check) || len(code) <= len(wasm)/2 {
		t.Fatalf("instrumented module of %d bytes from %d", len(code), len(wasm))
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	compiled, err := rt.CompileModule(ctx, code)
	if err != nil {
		t.Fatalf("wazero refuses the instrumented module: %v", err)
	}
	if _, ok := compiled.ExportedFunctions()["evolve"]; !ok {
		t.Error("evolve export lost")
	}
	if err := checkExports(compiled); err != nil {
		t.Error(err)
	}
}

func TestW4_InstrumentRefusesWhatItCannotRewrite(t *testing.T) {
	for name, wasm := range map[string][]byte{
		"not wasm":       []byte("hello"),
		"no sched_yield": []byte("\x00asm\x01\x00\x00\x00"),
	} {
		if _, err := instrument(wasm); !errors.Is(err, errNotInstrumentable) {
			t.Errorf("%s: error %v, want errNotInstrumentable", name, err)
		}
	}
}

// TestW4_FallbackTimesOut checks the path of modules that cannot be
// instrumented: wazero's close-on-context-done enforces the timeout. The
// timeout is a second: the call after it instantiates a fresh instance within
// the same budget, which took more than 200 ms on a loaded machine.
func TestW4_FallbackTimesOut(t *testing.T) {
	skipInstrument = true
	defer func() { skipInstrument = false }()
	ctx := context.Background()
	p, err := Load(ctx, wasmbuild.Build(t, "testdata/loop"), Config{CallTimeout: time.Second, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if p.pool.Counters.Created() != 1 || !p.rt.key.closeOnDone {
		t.Fatal("the plugin does not use the close-on-context-done runtime")
	}
	req := &abi.EvolveRequest{StreamID: "o-1", Events: []abi.SourcedEvent{{Source: "Order", Event: abi.Event{Stream: "Order", StreamID: "o-1", Version: 1, Type: "Loop"}}}}
	_, err = p.Evolve(ctx, req)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want ErrTimeout", err)
	}
	req.Events[0].Event.Type = "Placed"
	if _, err := p.Evolve(ctx, req); err != nil {
		t.Fatalf("plugin stopped serving: %v", err)
	}
}

// BenchmarkInstrument measures the rewrite that Load does before compiling
// (part of every cold start, cache or not).
func BenchmarkInstrument(b *testing.B) {
	wasm := wasmbuild.Build(b, "testdata/good")
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := instrument(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
