package swap_test

import (
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/swap"
)

// TestES1_SwapRefusesADifferentComposite: a replacement that declares a
// stream id composite other than the configured one is incompatible; one
// that declares the same, or none (ABI 1.0/1.1), is not.
func TestES1_SwapRefusesADifferentComposite(t *testing.T) {
	first := abi.Description{Name: "p", Sources: []abi.SourceDesc{{Name: "order", Stream: "Order", Mode: abi.ModeFold}},
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve}}
	e := swap.ExpectOf(first)
	e.StreamComposites = map[string][]string{"Order": {"tenantId", "orderId"}}
	if err := e.Check(first); err != nil {
		t.Fatalf("a version declaring nothing: %v", err)
	}
	same := first
	same.Composites = []abi.SourceComposite{{Source: "order", Fields: []string{"tenantId", "orderId"}}}
	if err := e.Check(same); err != nil {
		t.Fatalf("the configured composite: %v", err)
	}
	other := first
	other.Composites = []abi.SourceComposite{{Source: "order", Fields: []string{"orderId"}}}
	err := e.Check(other)
	if err == nil || !strings.Contains(err.Error(), `["orderId"]`) || !strings.Contains(err.Error(), `["tenantId" "orderId"]`) {
		t.Fatalf("a different composite: %v, want a refusal naming both", err)
	}
}
