package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmtest"
)

// hangBound is how long a test waits for a Load that must end within its
// call timeout (or its context) before it declares it hung. It is far
// above those, so a loaded machine does not fail the test; a Load that
// does not honour them never returns at all.
const hangBound = 60 * time.Second

// loadWithin runs Load in the background and returns its error, failing the
// test when it has not returned within hangBound.
func loadWithin(t *testing.T, ctx context.Context, wasm []byte, cfg plugin.Config) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		p, err := plugin.Load(ctx, wasm, cfg)
		if p != nil {
			p.Close(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		t.Fatalf("Load still running after %s", hangBound)
		return nil
	}
}

// TestW6_InstantiationRunsUnderTheWatchdog: a module whose start function
// (the Wasm start section, which runs while the module is instantiated)
// or _initialize never returns is refused once the call timeout is over,
// with a *LoadError matching ErrTimeout that says which, in an instrumented
// module and an uninstrumented one; Load honours its context the same way
// (ErrCanceled). Before, the start section ran outside the watchdog and
// Load never returned.
func TestW6_InstantiationRunsUnderTheWatchdog(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, instrumented := range []bool{true, false} {
		kind := map[bool]string{true: "instrumented", false: "uninstrumented"}[instrumented]
		for _, tc := range []struct {
			what string
			m    wasmtest.RawPlugin
		}{
			{"start function", wasmtest.RawPlugin{Yield: instrumented, StartLoop: true}},
			{"_initialize", wasmtest.RawPlugin{Yield: instrumented, InitializeLoop: true}},
		} {
			t.Run(kind+"/"+tc.what, func(t *testing.T) {
				err := loadWithin(t, context.Background(), tc.m.Bytes(), plugin.Config{Name: "looper", PoolSize: 1, CallTimeout: timeout})
				t.Logf("error: %v", err)
				var le *plugin.LoadError
				if !errors.As(err, &le) || le.Plugin != "looper" {
					t.Fatalf("error %v is not a *LoadError naming the plugin", err)
				}
				if !errors.Is(err, plugin.ErrTimeout) {
					t.Errorf("error %v does not match ErrTimeout", err)
				}
				for _, want := range []string{tc.what, "timeout after 300ms"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
			})
		}
		t.Run(kind+"/Load's context", func(t *testing.T) {
			// Load stops after compiling when its context already ended
			// then, without running the start function: the deadline
			// leaves compiling this small module far more time than it
			// takes on a loaded machine, so it ends in the start function.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			m := wasmtest.RawPlugin{Yield: instrumented, StartLoop: true}
			err := loadWithin(t, ctx, m.Bytes(), plugin.Config{Name: "looper", PoolSize: 1, CallTimeout: time.Hour})
			t.Logf("error: %v", err)
			if !errors.Is(err, plugin.ErrCanceled) || !strings.Contains(err.Error(), "start function") {
				t.Errorf("error %v, want one matching ErrCanceled naming the start function", err)
			}
		})
	}
}

// TestW6_StartFunctionThatReturnsStillRuns: a start function that returns
// runs once per instance, before _initialize, as the Wasm spec has it,
// though the host calls it itself (under the watchdog).
func TestW6_StartFunctionThatReturnsStillRuns(t *testing.T) {
	for _, instrumented := range []bool{true, false} {
		m := wasmtest.RawPlugin{Yield: instrumented, StartSetsDescribe: true}
		p, err := plugin.Load(context.Background(), m.Bytes(), plugin.Config{PoolSize: 1})
		if err != nil {
			t.Fatalf("instrumented=%v: %v", instrumented, err)
		}
		if got := p.Describe().Version; got != "0.0.2" {
			t.Errorf("instrumented=%v: describe answered version %q, want the start function's 0.0.2", instrumented, got)
		}
		p.Close(context.Background())
	}
}
