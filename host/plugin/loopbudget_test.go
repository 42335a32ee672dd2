package plugin_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
)

// spinReq asks the spin guest for a loop of n iterations.
func spinReq(n int64) *abi.EvolveRequest {
	req := evolveReq("Spin")
	req.Events[0].Event.Data["n"] = abi.N(strconv.FormatInt(n, 10))
	return req
}

// TestW4_LoopBudgetFailsDeterministically checks Config.MaxLoopIterations,
// the fuel-like cap: a call that loops past its budget fails with
// ErrLoopBudget, every time and on every instance, long before CallTimeout;
// a call well within it succeeds, and the plugin keeps serving.
func TestW4_LoopBudgetFailsDeterministically(t *testing.T) {
	const budget = 1_000_000
	ctx := context.Background()
	p := loadGuest(t, "spin", plugin.Config{PoolSize: 2, MaxLoopIterations: budget, CallTimeout: time.Minute})
	tests := []struct {
		name string
		n    int64
		fail bool
	}{
		{"within", budget / 2, false},
		{"just past the rounding", budget + 4096 + 1, true},
		{"far past", 50 * budget, true},
		{"within again", budget / 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 4; i++ { // fresh and reused instances alike
				resp, err := p.Evolve(ctx, spinReq(tt.n))
				if !tt.fail {
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					if got := resp.State["count"].Str; got != "1" {
						t.Fatalf("count = %q", got)
					}
					continue
				}
				wantCallError(t, err, "spin@0.0.1", "evolve", plugin.ErrLoopBudget, "loop budget of 1000000 iterations exhausted")
				if errors.Is(err, plugin.ErrTimeout) || errors.Is(err, plugin.ErrTrap) {
					t.Errorf("the budget's failure also matches another cause: %v", err)
				}
			}
			mustServe(t, p)
		})
	}
	// The infinite loop, too, ends on the budget, not on the timeout.
	loop := loadGuest(t, "loop", plugin.Config{PoolSize: 1, MaxLoopIterations: budget, CallTimeout: time.Minute})
	_, err := loop.Evolve(ctx, evolveReq("Loop"))
	wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrLoopBudget, "loop budget of 1000000 iterations exhausted")
	mustServe(t, loop)

	// Without a budget the same spin runs to its end.
	free := loadGuest(t, "spin", plugin.Config{PoolSize: 1})
	if _, err := free.Evolve(ctx, spinReq(50*budget)); err != nil {
		t.Fatalf("without a budget: %v", err)
	}
}

func TestW4_LoopBudgetConfig(t *testing.T) {
	ctx := context.Background()
	wasm := testGuest(t, "spin")
	for _, n := range []int64{-1, plugin.MaxLoopIterationsLimit + 1} {
		if _, err := plugin.Load(ctx, wasm, plugin.Config{MaxLoopIterations: n}); !errors.Is(err, plugin.ErrConfig) {
			t.Errorf("MaxLoopIterations %d: %v, want ErrConfig", n, err)
		}
	}
	// A module the host cannot instrument cannot count its loops.
	plugin.SetInstrumentForTest(false)
	defer plugin.SetInstrumentForTest(true)
	if _, err := plugin.Load(ctx, wasm, plugin.Config{MaxLoopIterations: 1 << 20}); !errors.Is(err, plugin.ErrConfig) {
		t.Errorf("uninstrumented module with a loop budget: %v, want ErrConfig", err)
	}
}
