package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// run is one source instance's share of a row in one attempt.
type run struct {
	id      instanceID
	src     Source
	srcIdx  int
	c       uint64      // the checkpoint read (0: none)
	batch   []abi.Event // the batch's events of this row, sorted, de-duplicated
	already []abi.Event // batch events at or below c
	fold    []abi.Event // events above c to fold, in version order
	max     uint64      // the highest version considered
	other   map[uint64]bool
	older   []abi.Event // latest mode: events not tried yet, ascending; the next to try is the last
	failed  error
	slot    int // where the instance's checkpoint is kept: slotField or slotMap
}

// applyRow runs the per-row step with its lost-race retries.
func (e *Engine) applyRow(ctx context.Context, w *rowWork, item abi.Item, present map[instanceID]map[uint64]bool) Outcome {
	gaps := map[instanceID]*gapRead{}
	var err error
	for attempt := 1; ; attempt++ {
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

// attempt plans, folds and writes the row once. retry is set when the
// conditional write lost a race.
func (e *Engine) attempt(ctx context.Context, w *rowWork, item abi.Item, present map[instanceID]map[uint64]bool, gaps map[instanceID]*gapRead) (Outcome, bool) {
	row, err := e.readRow(item)
	if err != nil {
		return e.failed(w, err), false
	}
	runs, err := e.plan(ctx, w, row, present, gaps)
	if err != nil {
		return e.failed(w, err), false
	}
	f, err := e.fold(ctx, w, row, runs)
	if err != nil {
		return e.failed(w, err), false
	}
	o := Outcome{Key: w.key, Positions: w.positions(), State: row.item, Revision: row.revision, Removed: row.tombstone}
	for _, r := range runs {
		in := f.instance(r)
		in.Positions = instancePositions(w.instances[r.id])
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
	o.State, o.Written, o.Removed = written, true, f.resp.Removed
	if o.Removed {
		o.State = nil // a tombstone is no row
	}
	if e.p.Revision != nil {
		o.Revision = row.nextRevision(e.p.Revision)
	}
	for i, r := range runs {
		if f.moved[r.id] {
			o.Instances[i].Version = f.checkpoint[r.id]
		}
	}
	return o, false
}

// plan sorts and de-duplicates each instance's events, gives each instance
// its checkpoint (the field or the map), splits off the events the row
// already has and fills gaps from the event store.
func (e *Engine) plan(ctx context.Context, w *rowWork, row *rowState, present map[instanceID]map[uint64]bool, gaps map[instanceID]*gapRead) ([]*run, error) {
	var runs []*run
	for id, ins := range w.instances {
		r := &run{id: id, other: map[uint64]bool{}}
		for i, s := range e.p.Sources {
			if s.Name == id.source {
				r.src, r.srcIdx = s, i
			}
		}
		r.batch = sortedUnique(ins)
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].srcIdx != runs[j].srcIdx {
			return runs[i].srcIdx < runs[j].srcIdx
		}
		return runs[i].id.streamID < runs[j].id.streamID
	})
	if err := e.assign(runs, row, w.rebuild); err != nil {
		return nil, err
	}
	var fill []*run // the runs whose gaps to fill, all at once
	for _, r := range runs {
		if r.failed != nil {
			continue
		}
		var c uint64
		switch {
		case w.rebuild:
		case r.slot == slotField:
			var err error
			if c, err = row.fieldCheckpoint(e.scal[r.srcIdx]); err != nil {
				return nil, err
			}
		default:
			c = row.entries[mapKey(r.id)]
		}
		r.c = c
		for _, ev := range r.batch {
			if ev.Version <= c {
				r.already = append(r.already, ev)
			} else {
				r.fold = append(r.fold, ev)
			}
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

// The place of an instance's checkpoint in the row.
const (
	slotField = iota // the checkpoint field
	slotMap          // its entry in the checkpoint map
)

// assign gives each run (in fold order) its checkpoint's place. A source
// with a checkpoint field of its own: the field follows one instance of the
// source, the one its instance field names, or, when it names none (or on a
// rebuild), the first such instance to arrive that the map does not keep
// already. The other instances go to the map; without a map they fail with
// ErrProjectionSourceConflict. Without an instance field the row does not
// say which instance its field follows, so a second instance of the source
// fails the row.
func (e *Engine) assign(runs []*run, row *rowState, rebuild bool) error {
	owners := append([]string(nil), row.owners...)
	if rebuild {
		clear(owners)
	}
	for _, r := range runs {
		sc := e.scal[r.srcIdx]
		switch {
		case sc.Field == "":
			r.slot = slotMap
		case sc.InstanceField == "":
			if n := countSource(runs, r.srcIdx); n > 1 {
				return fmt.Errorf("%w: stream instances %s feed one row, but its checkpoint field %q can follow only one and the row does not record which; set checkpoint.instanceField and checkpoint.map to give each instance its own checkpoint, or key rows by stream instance", ErrProjectionSourceConflict, describeRuns(runs), sc.Field)
			}
			r.slot = slotField
		case owners[r.srcIdx] != "" && r.id.streamID == owners[r.srcIdx]:
			r.slot = slotField
		case owners[r.srcIdx] == "" && (rebuild || !hasEntry(row, r.id)):
			r.slot, owners[r.srcIdx] = slotField, r.id.streamID
		case e.p.Checkpoint.Map != "":
			r.slot = slotMap
		default:
			r.slot = slotMap
			r.failed = fmt.Errorf("%w: %s feeds a row whose checkpoint field %q follows %s (instance field %q), and the projection has no checkpoint map for another instance; set checkpoint.map to give each instance its own checkpoint, or key rows by stream instance", ErrProjectionSourceConflict, describeRuns([]*run{r}), sc.Field, owners[r.srcIdx], sc.InstanceField)
		}
	}
	return nil
}

func countSource(runs []*run, idx int) int {
	n := 0
	for _, r := range runs {
		if r.srcIdx == idx {
			n++
		}
	}
	return n
}

func hasEntry(row *rowState, id instanceID) bool {
	_, ok := row.entries[mapKey(id)]
	return ok
}

func describeRuns(runs []*run) string {
	s := ""
	for i, r := range runs {
		if i > 0 {
			s += ", "
		}
		s += r.id.source + "#" + r.id.streamID
	}
	return s
}

func sortedUnique(ins []Input) []abi.Event {
	evs := make([]abi.Event, 0, len(ins))
	for _, in := range ins {
		evs = append(evs, in.Event)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Version < evs[j].Version })
	out := evs[:0]
	for i, ev := range evs {
		if i > 0 && ev.Version == evs[i-1].Version {
			continue
		}
		out = append(out, ev)
	}
	return out
}
