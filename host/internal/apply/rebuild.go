package apply

import (
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// ErrRebuildFoldsNoRow is the error of a rebuild that wrote nothing
// because the instances' events, folded from the initial state, make no
// row (every one was skipped or rejected), while the table holds one.
var ErrRebuildFoldsNoRow = errors.New("the rebuild folds no row")

// A rebuild folds a row from its initial state, in one write conditioned
// on the row as read (its revision, or its checkpoint), through the same
// per-row step as a delivery (or, when the effects it commits do not fit
// one transaction, in steps: steps.go). What it folds, per instance:
//
//   - the events up to the checkpoint the row holds (its bound): applied
//     before, so folded again without committing their effects and without
//     being reported;
//   - the events after it (every event, for an instance the row holds no
//     checkpoint for), up to the head as read: applied as a delivery would
//     apply them, effects included, and reported;
//   - when the table holds no row for the key (not even a tombstone), every
//     event: history (a new read model, a new table), folded without
//     effects and not reported.
//
// A lost race re-reads the row and decides again, so the rebuild never
// writes a checkpoint below what the live feed wrote meanwhile, and no
// event's effects are committed twice.

// settleRebuild completes a rebuild's fold: it fails the row when an
// instance failed (a rebuild cannot leave an instance out without losing
// its part), refuses to write when the fold makes no row where the table
// holds one, and keeps every instance's checkpoint at or above the one the
// row held.
func (e *Engine) settleRebuild(w *rowWork, row *rowState, runs []*run, f *folded) error {
	for _, r := range runs {
		if r.failed != nil && w.refold {
			return fmt.Errorf("instance %s#%s failed to fold, so the row cannot be re-derived from every instance that feeds it and compared (nothing is written): %w", r.id.source, r.id.streamID, r.failed)
		}
		if r.failed != nil {
			return fmt.Errorf("instance %s#%s failed, and a rebuild re-derives the row from every instance that feeds it, so nothing was written: %w", r.id.source, r.id.streamID, r.failed)
		}
	}
	if !f.write {
		if row.item != nil {
			return fmt.Errorf("%w: every event of %s that addresses the row was skipped or rejected, so folded from the initial state they make no row (skipped or rejected events alone never create one); nothing was written and the row keeps its state, checkpoints and revision %d: name the instances whose events make the row, or check the plugin's skip and terminal decisions",
				ErrRebuildFoldsNoRow, describeRuns(runs), row.revision)
		}
		return nil
	}
	for _, r := range runs {
		c := max(r.after, w.repair.bounds[r.id].c)
		r.after, r.moved = c, c > 0
	}
	return nil
}

// rebuildOutcome keeps in a rebuild's instance outcome only the events
// applied as a delivery would apply them (after the row's checkpoint): the
// others were applied before, and reporting them would replay their side
// effects.
func (w *rowWork) rebuildOutcome(in *Instance) {
	b := w.repair.bounds[instanceID{in.Source, in.StreamID}]
	keep := func(evs []abi.Event) []abi.Event {
		var out []abi.Event
		for _, ev := range evs {
			if !b.silent(ev.Version) {
				out = append(out, ev)
			}
		}
		return out
	}
	in.Applied, in.Skipped, in.Superseded, in.AlreadyApplied = keep(in.Applied), keep(in.Skipped), keep(in.Superseded), nil
	var rej []Rejection
	for _, r := range in.Rejected {
		if !b.silent(r.Event.Version) {
			rej = append(rej, r)
		}
	}
	in.Rejected = rej
}

// silentEffect reports whether a rebuild commits no effects for ev of
// instance id: the row had applied it already, or it is history.
func (w *rowWork) silentEffect(id instanceID, ev abi.Event) bool {
	return w.rebuild && w.repair.bounds[id].silent(ev.Version)
}
