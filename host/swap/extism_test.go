package swap_test

import (
	"context"
	"testing"

	"github.com/dynafold/dynafold/host/plugin/extism/asbuild"
	"github.com/dynafold/dynafold/host/swap"
)

// TestH3_SwapAcrossTransports swaps the Go order-summary 2.0.0 (raw ABI)
// for the AssemblyScript order-summary (an Extism PDK module) and back:
// the pipeline loads each with its own transport (SPEC H3, W3).
func TestH3_SwapAcrossTransports(t *testing.T) {
	as := asbuild.Build(t, "../../plugins/examples/order-summary-as", asbuild.Module{
		Entry: "assembly/index.ts", SourceDir: "../../plugins/examples/order-summary-as/assembly",
		Args: []string{"--config", "asconfig.json", "--target", "release"},
	})
	ctx := context.Background()
	s := newSwapper(t, v2, swap.Config{})
	mustServe(t, s, "2")
	info, changed, err := s.Offer(ctx, swap.Candidate{Wasm: as, Origin: "order-summary-as"})
	if err != nil || !changed {
		t.Fatalf("offer the Extism plugin: %v %v", changed, err)
	}
	if info.Plugin != "order-summary@1.0.0" || info.Origin != "order-summary-as" {
		t.Errorf("serving %+v", info)
	}
	mustServe(t, s, "")
	if _, changed, err := s.Offer(ctx, candidate(t, v2)); err != nil || !changed {
		t.Fatalf("back to the Go plugin: %v %v", changed, err)
	}
	mustServe(t, s, "2")
	if st := s.Stats(); st.Swaps != 2 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}
