package extism_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/host/plugin/extism"
)

// TestW4_LoopBudgetRefused: the Extism transport does not count loop
// iterations, so it refuses Config.MaxLoopIterations rather than ignore it.
func TestW4_LoopBudgetRefused(t *testing.T) {
	_, err := extism.Load(context.Background(), orderSummaryAS(t), extism.Config{MaxLoopIterations: 1 << 20})
	if !errors.Is(err, extism.ErrConfig) {
		t.Fatalf("Load with MaxLoopIterations: %v, want ErrConfig", err)
	}
}
