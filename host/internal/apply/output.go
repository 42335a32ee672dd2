package apply

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// checkOutput checks what evolve returned against DynamoDB's rules before
// anything is written (itemcheck): the row's item, with its key attributes
// absent or the row's, and the effects of the applied events when they are
// committed (an outbox) or Projection.CheckEffects asks. A problem is a
// *logic.OutputError naming the plugin, the event and the attribute; the
// row fails.
func (e *Engine) checkOutput(w *rowWork, req *abi.EvolveRequest, resp *abi.EvolveResponse, f *folded) error {
	effects := e.p.CheckEffects || e.p.Outbox != nil
	for i, d := range resp.Decisions {
		if d.Outcome != abi.Applied {
			continue
		}
		ev := req.Events[i].Event
		f.last = ev
		if !effects || e.p.NoOutputCheck {
			continue
		}
		for j, v := range d.Effects {
			if p := itemcheck.Value(v); p != nil {
				return e.outputError(f, ev, fmt.Sprintf("effect %d", j), p)
			}
		}
	}
	if resp.State == nil || resp.Removed || e.p.NoOutputCheck {
		return nil
	}
	if p := itemcheck.Item(resp.Item, w.key); p != nil {
		return e.outputError(f, f.last, "to_item", p)
	}
	return nil
}

// outputError is the *logic.OutputError of a problem in output made by the
// fold of ev.
func (e *Engine) outputError(f *folded, ev abi.Event, output string, p *itemcheck.Problem) *logic.OutputError {
	by := f.by
	if by == "" {
		by = e.plugin
	}
	return &logic.OutputError{Projection: e.p.Name, Plugin: by, Stream: ev.Stream, StreamID: ev.StreamID,
		Version: ev.Version, Type: ev.Type, Output: output, Path: p.Path, Problem: p.What}
}
