package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// ErrUnnamedInstance is the error of a rebuild of a row that a stream
// instance the row does not name feeds: a source's checkpoint field without
// an instance field does not say which instance it follows, so a rebuild
// from the instances the row names would drop that source's part.
var ErrUnnamedInstance = errors.New("the row is fed by a stream instance it does not name")

// repairWork is what a rebuild or a catch-up brings to one row. Which
// instances it folds is decided again by every attempt, from the row as
// that attempt read it, so an instance the live feed adds to the row
// meanwhile is folded too and never dropped.
type repairWork struct {
	named []InstanceRef // always folded: given, found by SourcesOf, or the stream repaired
	known bool          // also fold every instance the row's checkpoints name
	cache map[instanceID]*readEvents
	// bounds holds, on a rebuild, each instance's checkpoint as the
	// attempt read it: the versions the row has already considered.
	bounds map[instanceID]bound
	// ids are the instances the last attempt folded, in fold order, and
	// stored their checkpoints as that attempt read them: a catch-up
	// reports every instance it brought up, those already at the head
	// included, with its real checkpoint.
	ids    []instanceID
	stored map[instanceID]uint64
}

// bound is an instance's checkpoint as read by a rebuild (0 when the row
// holds none). Events at or below it were applied before: the rebuild
// folds them again without committing their effects or reporting them.
// Events above it are applied as a delivery would apply them. When the
// table holds no row at all (history), every event is folded silently.
type bound struct {
	c       uint64
	history bool
}

// silent reports whether a rebuild folds version v without effects.
func (b bound) silent(v uint64) bool { return b.history || v <= b.c }

// readEvents are the events of one instance read so far: versions
// (after, to], and which of them address the row.
type readEvents struct {
	after, to uint64
	evs       []abi.Event
	mine      []bool
}

// newRepair returns the repair of a row from the named instances (and,
// with known, those its checkpoints name).
func newRepair(named []InstanceRef, known bool) *repairWork {
	return &repairWork{named: named, known: known, cache: map[instanceID]*readEvents{}}
}

// seed gives the repair of the row keyStr an instance's events already
// read from version 1, with their keys.
func (rw *repairWork) seed(ref InstanceRef, evs []abi.Event, ks []abi.KeyResult, keyStr string) {
	// Clipped: the rows of one instance share its events, and a later read
	// appends to each row's own copy.
	rd := &readEvents{evs: slices.Clip(evs), mine: make([]bool, len(evs))}
	for i, k := range ks {
		rd.mine[i] = k.Key != nil && k.Error == nil && keyString(k.Key) == keyStr
	}
	if n := len(evs); n > 0 {
		rd.to = evs[n-1].Version
	}
	rw.cache[instanceID{ref.Source, ref.StreamID}] = rd
}

// repairRow reads the row and runs the per-row step on it as a rebuild
// (from initial) or a catch-up (from the row's checkpoints), with the
// apply step's lost-race retries.
func (e *Engine) repairRow(ctx context.Context, key abi.Item, keyStr string, rw *repairWork, rebuild bool) Outcome {
	w := &rowWork{key: key, keyStr: keyStr, rebuild: rebuild, repair: rw}
	if err := e.checkRefs(rw.named); err != nil {
		return e.failed(w, err)
	}
	item, err := e.db.GetItem(ctx, e.p.Table, key)
	if err != nil {
		return e.failed(w, fmt.Errorf("reading the row: %w", err))
	}
	o := e.applyRow(ctx, w, item, presence{})
	e.afterRow(ctx, w, &o)
	if !rebuild && o.Err == nil {
		rw.reportAll(&o)
	}
	return o
}

// reportAll adds to a catch-up's outcome the instances it brought up that
// had nothing to apply, with the checkpoint the row holds for each, so an
// outcome lists every instance caught up, in fold order.
func (rw *repairWork) reportAll(o *Outcome) {
	if len(rw.ids) == 0 {
		return
	}
	have := make(map[instanceID]Instance, len(o.Instances))
	for _, in := range o.Instances {
		have[instanceID{in.Source, in.StreamID}] = in
	}
	all := make([]Instance, 0, len(rw.ids))
	for _, id := range rw.ids {
		in, ok := have[id]
		if !ok {
			in = Instance{Source: id.source, StreamID: id.streamID, Version: rw.stored[id]}
		}
		delete(have, id)
		all = append(all, in)
	}
	for _, in := range o.Instances { // any the fold reports beyond the plan
		if _, ok := have[instanceID{in.Source, in.StreamID}]; ok {
			all = append(all, in)
		}
	}
	o.Instances = all
}

// checkRefs reports an instance of a source the projection does not have.
func (e *Engine) checkRefs(refs []InstanceRef) error {
	for _, ref := range refs {
		if e.sourceIndex(ref.Source) < 0 {
			var names []string
			for _, s := range e.p.Sources {
				names = append(names, s.Name)
			}
			return fmt.Errorf("instance %s: the projection has no source %q; its sources are %v", ref, ref.Source, names)
		}
	}
	return nil
}

// prepare decides, from the row as this attempt read it, which instances
// the repair folds, reads the events it lacks, and fills w.instances with
// those that address the row (on a catch-up, those after the checkpoint)
// and present with every version read. nothing is set when no instance has
// an event to apply.
func (e *Engine) prepare(ctx context.Context, w *rowWork, row *rowState, present presence) (nothing bool, err error) {
	rw := w.repair
	ids := e.repairInstances(rw, row)
	if w.rebuild && rw.known {
		if err := e.checkUnnamed(row, ids); err != nil {
			if len(ids) == 0 {
				return false, fmt.Errorf("%w: %w", ErrNoInstances, err)
			}
			return false, err
		}
	}
	if len(ids) == 0 {
		return false, fmt.Errorf("%w: name the instances (<source>#<streamId>; on the command line --instance)", ErrNoInstances)
	}
	w.instances.reset()
	rw.bounds = map[instanceID]bound{}
	rw.ids, rw.stored = ids, map[instanceID]uint64{}
	events := 0
	for _, id := range ids {
		stored, known, err := e.storedCheckpoint(row, id)
		if err != nil {
			return false, err
		}
		rw.stored[id] = stored
		after := stored
		if w.rebuild {
			after = 0
			rw.bounds[id] = bound{c: stored, history: row.stored == nil}
		}
		rd, err := e.readInstance(ctx, w, id, after, stored)
		if err != nil {
			return false, err
		}
		if w.rebuild && rd.to < stored {
			// The events were read after the row, so no live write can
			// have put its checkpoint above their head: only an older
			// system's data, an edit or lost events do. Left there, it
			// would make the feed take the next events for ones the row
			// has (and drop them); the rebuild brings it down to the head.
			rw.bounds[id] = bound{c: rd.to, history: row.stored == nil}
			e.p.Logger.Warn("the row's checkpoint was above its stream's head; the rebuild brings it down to the head (an older system's data, an edited row, or events lost from the event store)",
				"row", w.keyStr, "instance", id.source+"#"+id.streamID, "checkpoint", stored, "head", rd.to)
		}
		var mine []Input
		for i, ev := range rd.evs {
			present.mark(id, ev.Version)
			if rd.mine[i] && ev.Version > after {
				mine = append(mine, Input{Source: id.source, Event: ev, Pos: -1})
			}
		}
		present.seal(id)
		events += len(mine)
		// On a rebuild an instance the row knows keeps its checkpoint even
		// when none of its events address the row.
		if len(mine) > 0 || (w.rebuild && known) {
			w.instances.set(id, mine)
		}
	}
	if events == 0 {
		if w.rebuild {
			return false, fmt.Errorf("no event of %v addresses the row; check the instances", ids)
		}
		return true, nil
	}
	return false, nil
}

// repairInstances returns the instances a repair folds in this attempt, in
// fold order: the named ones and, with known, those the row's checkpoints
// name (its map entries and the owners of its checkpoint fields).
func (e *Engine) repairInstances(rw *repairWork, row *rowState) []instanceID {
	set := map[instanceID]bool{}
	for _, r := range rw.named {
		set[instanceID{r.Source, r.StreamID}] = true
	}
	if rw.known {
		for id := range e.knownInstances(row) {
			set[id] = true
		}
	}
	out := make([]instanceID, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	e.sortFoldOrder(out)
	return out
}

// checkUnnamed refuses a rebuild that would drop a source's part: a source
// whose checkpoint field is set on the row but records no instance, and of
// which no instance is folded.
func (e *Engine) checkUnnamed(row *rowState, ids []instanceID) error {
	for i, sc := range e.scal {
		if sc.Field == "" || sc.InstanceField != "" {
			continue
		}
		if _, ok := row.stored[sc.Field]; !ok {
			continue
		}
		named := false
		for _, id := range ids {
			named = named || id.source == e.p.Sources[i].Name
		}
		if !named {
			return fmt.Errorf("%w: source %q keeps its checkpoint in the field %q, which does not record the stream instance it follows, so a rebuild from %s would drop that source's part of the row; rebuild the row with `host rebuild --row KEY --instance SOURCE#ID ...` (Host.RebuildRow) naming every instance that feeds it, or set the source's instance field",
				ErrUnnamedInstance, e.p.Sources[i].Name, sc.Field, describeIDs(ids))
		}
	}
	return nil
}

func describeIDs(ids []instanceID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = mapKey(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// storedCheckpoint returns an instance's checkpoint as the row holds it:
// its checkpoint field when the row says it follows this instance (or the
// field records no instance), else its map entry. known is false when the
// row holds none.
func (e *Engine) storedCheckpoint(row *rowState, id instanceID) (c uint64, known bool, err error) {
	i := e.sourceIndex(id.source)
	if sc := e.scal[i]; sc.Field != "" {
		if _, ok := row.stored[sc.Field]; ok && (row.owners[i] == id.streamID || sc.InstanceField == "") {
			c, err := row.fieldCheckpoint(sc)
			return c, err == nil, err
		}
	}
	c, known = row.entries[mapKey(id)]
	return c, known, nil
}

// readInstance returns the instance's events from after on, reading what
// the cache lacks: everything from after when it starts later, and the
// versions up to the head when it does not reach need.
func (e *Engine) readInstance(ctx context.Context, w *rowWork, id instanceID, after, need uint64) (*readEvents, error) {
	rw := w.repair
	rd := rw.cache[id]
	var from uint64
	switch {
	case rd == nil || rd.after > after:
		rd, from = &readEvents{after: after, to: after}, after
	case rd.to < need:
		from = rd.to
	default:
		return rd, nil
	}
	src := e.p.Sources[e.sourceIndex(id.source)]
	evs, err := e.events.ReadFrom(ctx, src.Stream, id.streamID, from, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s after version %d: %w", src.Stream, id.streamID, from, err)
	}
	if len(evs) > 0 {
		ks, err := e.keys(ctx, src.Name, evs)
		if err != nil {
			return nil, fmt.Errorf("keying %s %s: %w", src.Stream, id.streamID, err)
		}
		for i, k := range ks {
			if k.Error != nil {
				return nil, fmt.Errorf("key failed on %s %s v%d: %w", src.Stream, id.streamID, evs[i].Version, k.Error)
			}
			rd.evs = append(rd.evs, evs[i])
			rd.mine = append(rd.mine, k.Key != nil && keyString(k.Key) == w.keyStr)
		}
		rd.to = evs[len(evs)-1].Version
	}
	rw.cache[id] = rd
	return rd, nil
}
