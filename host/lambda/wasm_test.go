package lambda_test

import (
	"testing"

	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestH1_WasmPluginAnswersLikeTheNativeLogic runs the captured batches
// through the order-summary plugin compiled to Wasm (wasip1, c-shared).
func TestH1_WasmPluginAnswersLikeTheNativeLogic(t *testing.T) {
	plugin := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")

	f := newFn(t, setup{plugin: plugin})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
	f.wantRow(t, "o-2", summary{"placed", "1", "100", "2"})
	f.wantRow(t, "o-3", summary{"placed", "0", "0", "1"})

	fr := fixture(t, "failing_row.json")
	f.seed(t, fr)
	_, seq, _ := records(t, fr)
	if ids := f.mustInvoke(t, fr); !equal(ids, []string{seq[0]}) {
		t.Fatalf("failing row: batchItemFailures = %v, want [%s]", ids, seq[0])
	}
	f.wantNoRow(t, "o-5")
	f.wantRow(t, "o-10", summary{"placed", "1", "4.75", "2"})

	p := newFn(t, setup{plugin: plugin, source: lambda.SourcePipe})
	pb := fixture(t, "pipe_batch.json")
	p.seed(t, pb)
	_, _, eventID := records(t, pb)
	if ids := p.mustInvoke(t, pb); !equal(ids, []string{eventID[2], eventID[4]}) {
		t.Fatalf("pipe: batchItemFailures = %v, want [%s %s]", ids, eventID[2], eventID[4])
	}
	p.wantRow(t, "o-7", summary{"shipped", "1", "2.5", "3"})
}
