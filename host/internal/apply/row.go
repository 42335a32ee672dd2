package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// run is one source instance's share of a row in one attempt.
type run struct {
	id      instanceID
	src     Source
	srcIdx  int
	c       uint64          // the checkpoint read (0: none)
	batch   []abi.Event     // the batch's events of this row, sorted, de-duplicated
	already []abi.Event     // batch events at or below c
	fold    []abi.Event     // events above c to fold, in version order
	max     uint64          // the highest version considered
	other   map[uint64]bool // made by the first addOther (most rows have none)
	older   []abi.Event     // latest mode: events not tried yet, ascending; the next to try is the last
	failed  error
	slot    int  // where the instance's checkpoint is kept: slotField, slotMap or slotNone
	adopts  bool // the slot is an unowned field this instance may adopt, if it writes first
	// What the last fold of the runs decided (fold):
	decided []abi.Decision // parallel to fold
	after   uint64         // the checkpoint after the fold
	moved   bool           // an event was applied or rejected: the checkpoint is written
}

// applyRow runs the per-row step with its lost-race retries.
func (e *Engine) applyRow(ctx context.Context, w *rowWork, item abi.Item, present presence) Outcome {
	return e.applyRowAfter(ctx, w, item, present, map[instanceID]*gapRead{}, 0)
}

// applyRowAfter is applyRow for a row that has had tried write attempts
// already (applyFresh), with the gap reads made so far.
func (e *Engine) applyRowAfter(ctx context.Context, w *rowWork, item abi.Item, present presence, gaps map[instanceID]*gapRead, tried int) Outcome {
	var err error
	for attempt := tried + 1; ; attempt++ {
		o, retry := e.attempt(ctx, w, item, present, gaps)
		o.Attempts = attempt
		if !retry {
			return o
		}
		if attempt >= e.p.Retry.Attempts {
			return e.failedWith(w, fmt.Errorf("%w: the conditional write lost %d races in a row; the records go back to the source and the redelivery is skipped or gap-filled (raise the retry budget if many lanes write the same rows)", ErrConcurrentModification, attempt), attempt)
		}
		if err = e.retryWait(ctx, attempt); err != nil {
			return e.failedWith(w, fmt.Errorf("waiting to retry a lost race: %w", err), attempt)
		}
		item, err = e.db.GetItem(ctx, e.p.Table, w.key)
		if err != nil {
			return e.failedWith(w, fmt.Errorf("re-reading the row after a lost race: %w", err), attempt)
		}
	}
}

func (e *Engine) failedWith(w *rowWork, err error, attempts int) Outcome {
	o := e.failed(w, err)
	o.Attempts = attempts
	return o
}

// attemptOnce plans, folds and writes the row once: the whole run, or,
// when its effects do not fit one transaction, its first step (w.more is
// then set and w.stepItem holds the row as written; steps.go). retry is
// set when the conditional write lost a race.
func (e *Engine) attemptOnce(ctx context.Context, w *rowWork, item abi.Item, present presence, gaps map[instanceID]*gapRead) (Outcome, bool) {
	row, err := e.readRow(item)
	if err != nil {
		return e.failed(w, err), false
	}
	o := Outcome{Key: w.key, Positions: w.positions(), State: row.item, Revision: row.revision, Removed: row.tombstone}
	if w.repair != nil {
		// a rebuild or catch-up: the instances to fold follow the row as read
		nothing, err := e.prepare(ctx, w, row, present)
		if err != nil || nothing {
			if err != nil {
				o = e.failed(w, err)
			}
			return o, false
		}
	}
	// Where each instance's checkpoint goes may depend on the fold: an
	// unowned field goes to the first instance that writes it, and an
	// instance with no place for its checkpoint fails only when it writes.
	// When the fold settles a place differently from the plan, the row is
	// planned and folded again (at most once per instance and source).
	var (
		runs []*run
		f    *folded
		pl   = newPlacement()
	)
	for {
		runs, err = e.plan(ctx, w, row, present, gaps, pl)
		if err != nil {
			return e.failed(w, err), false
		}
		f, err = e.fold(ctx, w, row, runs)
		if err != nil {
			return e.failed(w, err), false
		}
		if !e.settle(runs, f, pl) {
			break
		}
	}
	if w.rebuild {
		if err := e.settleRebuild(w, row, runs, f); err != nil {
			return e.failed(w, err), false
		}
	}
	if allFailed(runs) {
		return e.failedRuns(w, runs), false
	}
	if f.write {
		cut, err := e.cut(w, runs)
		if err != nil {
			return e.failed(w, err), false
		}
		if cut {
			// the prefix whose effects fit, folded again from the row read
			if f, err = e.fold(ctx, w, row, runs); err != nil {
				return e.failed(w, err), false
			}
			if w.rebuild {
				if err := e.settleRebuild(w, row, runs, f); err != nil {
					return e.failed(w, err), false
				}
			}
			w.more = true
		}
	}
	for _, r := range runs {
		in := f.instance(r)
		in.Positions = instancePositions(w.instances.of(r.id))
		if w.rebuild {
			w.rebuildOutcome(&in)
		}
		o.Instances = append(o.Instances, in)
	}
	if !f.write {
		return o, false
	}
	written, err := e.write(ctx, w, row, runs, f)
	if errors.Is(err, store.ErrConditionFailed) {
		return o, true
	}
	if err != nil {
		return e.failed(w, fmt.Errorf("writing the row to %s: %w", e.p.Table, err)), false
	}
	if w.more {
		w.stepItem = written
	}
	o.State, o.Written, o.Removed, o.Committed = written, true, f.resp.Removed, e.p.Now()
	if o.Removed {
		o.State = nil // a tombstone is no row
	}
	if e.p.Revision != nil {
		o.Revision = row.nextRevision(e.p.Revision)
	}
	for i, r := range runs {
		if r.moved {
			o.Instances[i].Version = r.after
		}
	}
	return o, false
}

// plan sorts and de-duplicates each instance's events, gives each instance
// its checkpoint (the field or the map), splits off the events the row
// already has and fills gaps from the event store.
func (e *Engine) plan(ctx context.Context, w *rowWork, row *rowState, present presence, gaps map[instanceID]*gapRead, pl *placement) ([]*run, error) {
	runs := make([]*run, 0, len(w.instances.list))
	for _, ri := range w.instances.list {
		id, ins := ri.id, ri.ins
		r := &run{id: id}
		for i, s := range e.p.Sources {
			if s.Name == id.source {
				r.src, r.srcIdx = s, i
			}
		}
		r.batch = sortedUnique(ins)
		runs = append(runs, r)
	}
	if len(runs) > 1 {
		sort.Slice(runs, func(i, j int) bool {
			if runs[i].srcIdx != runs[j].srcIdx {
				return runs[i].srcIdx < runs[j].srcIdx
			}
			return runs[i].id.streamID < runs[j].id.streamID
		})
	}
	if err := e.assign(runs, row, w.rebuild, pl); err != nil {
		return nil, err
	}
	if !w.rebuild {
		if err := e.checkHostRow(row); err != nil {
			return nil, err
		}
	}
	var fill []*run // the runs whose gaps to fill, all at once
	for _, r := range runs {
		if r.failed != nil {
			continue
		}
		var c uint64
		switch {
		case w.rebuild, r.slot == slotNone:
		case r.slot == slotField:
			var err error
			if c, err = row.fieldCheckpoint(e.scal[r.srcIdx]); err != nil {
				return nil, err
			}
		default:
			c = row.entries[mapKey(r.id)]
		}
		r.c = c
		// r.batch is sorted: the events at or below c, then those above,
		// each a part of it (no copy); already is capped so that nothing
		// appended to it reaches fold's events.
		k := sort.Search(len(r.batch), func(i int) bool { return r.batch[i].Version > c })
		if k > 0 {
			r.already = r.batch[:k:k]
		}
		if k < len(r.batch) {
			r.fold = r.batch[k:]
		}
		if len(r.fold) > 0 && r.src.Mode == abi.ModeLatest {
			// Only the newest event is folded, nothing is read; older ones
			// are tried, newest first, when it is rejected or skipped.
			n := len(r.fold)
			r.max = r.fold[n-1].Version
			r.older = append([]abi.Event(nil), r.fold[:n-1]...)
			r.fold = []abi.Event{r.fold[n-1]}
			continue
		}
		if len(r.fold) > 0 {
			r.max = r.fold[len(r.fold)-1].Version
			fill = append(fill, r)
		}
	}
	if err := e.fillAllGaps(ctx, w, fill, present, gaps); err != nil {
		return nil, err
	}
	return runs, nil
}

func sortedUnique(ins []Input) []abi.Event {
	evs := make([]abi.Event, 0, len(ins))
	for _, in := range ins {
		evs = append(evs, in.Event)
	}
	slices.SortStableFunc(evs, func(a, b abi.Event) int { return cmp.Compare(a.Version, b.Version) })
	out := evs[:0]
	for i, ev := range evs {
		if i > 0 && ev.Version == evs[i-1].Version {
			continue
		}
		out = append(out, ev)
	}
	return out
}
