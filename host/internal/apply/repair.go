package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// InstanceRef names a stream instance read by one of the projection's
// sources.
type InstanceRef struct {
	Source   string // the source's name
	StreamID string // the stream id
}

// String is "<source>#<streamId>", the instance's checkpoint-map entry.
func (r InstanceRef) String() string { return r.Source + "#" + r.StreamID }

// SourcesOf finds the stream instances that feed a row, for RebuildRow when
// it is given none: for example over a stream index.
type SourcesOf func(ctx context.Context, key abi.Item) ([]InstanceRef, error)

// ErrNoInstances is returned by RebuildRow and CatchUpRow when no stream
// instance is known for the row: none given, and none in the row's
// checkpoints.
var ErrNoInstances = errors.New("no stream instance is known for the row")

// RebuildRow re-derives a row from the named stream instances: it folds
// each instance's events keyed to the row from initial (ignoring the row's
// state and checkpoints), and writes every checkpoint from scratch with
// the next revision, conditioned on the row as read. A field-mapped
// checkpoint goes to the first instance in fold order, which repairs a row
// adopted by the wrong instance. Without instances, Projection.SourcesOf
// finds them, or else the row's own checkpoints (InstancesOf).
//
// As with Rebuild, the outcome carries no events, so a rebuild never
// replays side effects.
func (e *Engine) RebuildRow(ctx context.Context, key abi.Item, instances []InstanceRef) (Outcome, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Outcome{}, err
	}
	if len(instances) == 0 {
		if e.p.SourcesOf != nil {
			instances, err = e.p.SourcesOf(ctx, key)
		} else {
			instances, _, err = e.InstancesOf(ctx, key)
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("rebuild of row %s: finding its stream instances: %w", keyStr, err)
		}
	}
	o, err := e.repair(ctx, key, keyStr, instances, nil, true)
	for j := range o.Instances {
		in := &o.Instances[j]
		in.Applied, in.AlreadyApplied, in.Skipped, in.Rejected, in.Superseded = nil, nil, nil, nil, nil
	}
	return o, err
}

// CatchUpRow brings every stream instance the row's checkpoints know (its
// map entries and the owners of its checkpoint fields) up to the
// instance's head: it reads each one's events after its checkpoint and
// applies those keyed to the row, as a delivery would.
func (e *Engine) CatchUpRow(ctx context.Context, key abi.Item) (Outcome, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Outcome{}, err
	}
	instances, after, err := e.InstancesOf(ctx, key)
	if err != nil {
		return Outcome{}, fmt.Errorf("catch-up of row %s: %w", keyStr, err)
	}
	return e.repair(ctx, key, keyStr, instances, after, false)
}

// InstancesOf reads the row and returns the stream instances its
// checkpoints know, in fold order, with their checkpoints: the map's
// entries and, for each source with a checkpoint field and an instance
// field, the instance that owns it. A checkpoint field without an instance
// field does not say which instance it follows, so it is not listed.
func (e *Engine) InstancesOf(ctx context.Context, key abi.Item) ([]InstanceRef, map[InstanceRef]uint64, error) {
	item, err := e.db.GetItem(ctx, e.p.Table, key)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the row: %w", err)
	}
	row, err := e.readRow(item)
	if err != nil {
		return nil, nil, err
	}
	after := map[InstanceRef]uint64{}
	for i, owner := range row.owners {
		if owner == "" {
			continue
		}
		c, err := row.fieldCheckpoint(e.scal[i])
		if err != nil {
			return nil, nil, err
		}
		after[InstanceRef{e.p.Sources[i].Name, owner}] = c
	}
	for k, c := range row.entries {
		src, id, ok := strings.Cut(k, "#")
		if !ok || e.sourceIndex(src) < 0 {
			e.p.Logger.Warn("the row's checkpoint map names an unknown source; its entry is left alone", "entry", k)
			continue
		}
		after[InstanceRef{src, id}] = c
	}
	out := make([]InstanceRef, 0, len(after))
	for r := range after {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		si, sj := e.sourceIndex(out[i].Source), e.sourceIndex(out[j].Source)
		if si != sj {
			return si < sj
		}
		return out[i].StreamID < out[j].StreamID
	})
	if len(out) == 0 {
		return nil, nil, ErrNoInstances
	}
	return out, after, nil
}

func (e *Engine) sourceIndex(name string) int {
	for i, s := range e.p.Sources {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// repair reads each instance's events after its checkpoint in after (all,
// on a rebuild), keeps those keyed to the row and runs the per-row step
// on them.
func (e *Engine) repair(ctx context.Context, key abi.Item, keyStr string, instances []InstanceRef, after map[InstanceRef]uint64, rebuild bool) (Outcome, error) {
	if len(instances) == 0 {
		return Outcome{}, fmt.Errorf("row %s: %w: name the instances (<source>#<streamId>)", keyStr, ErrNoInstances)
	}
	w := &rowWork{key: key, keyStr: keyStr, instances: map[instanceID][]Input{}, rebuild: rebuild}
	present := map[instanceID]map[uint64]bool{}
	for _, ref := range instances {
		i := e.sourceIndex(ref.Source)
		if i < 0 {
			var names []string
			for _, s := range e.p.Sources {
				names = append(names, s.Name)
			}
			return Outcome{}, fmt.Errorf("row %s: instance %s: the projection has no source %q; its sources are %v", keyStr, ref, ref.Source, names)
		}
		src := e.p.Sources[i]
		evs, err := e.events.ReadFrom(ctx, src.Stream, ref.StreamID, after[ref], 0)
		if err != nil {
			return Outcome{}, fmt.Errorf("row %s: reading %s %s: %w", keyStr, src.Stream, ref.StreamID, err)
		}
		if len(evs) == 0 {
			continue
		}
		ks, err := e.keys(ctx, src.Name, evs)
		if err != nil {
			return Outcome{}, fmt.Errorf("row %s: keying %s %s: %w", keyStr, src.Stream, ref.StreamID, err)
		}
		id := instanceID{src.Name, ref.StreamID}
		present[id] = map[uint64]bool{}
		for j, k := range ks {
			if k.Error != nil {
				return Outcome{}, fmt.Errorf("row %s: key failed on %s %s v%d: %w", keyStr, src.Stream, ref.StreamID, evs[j].Version, k.Error)
			}
			present[id][evs[j].Version] = true
			if k.Key != nil && keyString(k.Key) == keyStr {
				w.instances[id] = append(w.instances[id], Input{Source: src.Name, Event: evs[j], Pos: -1})
			}
		}
	}
	item, err := e.db.GetItem(ctx, e.p.Table, key)
	if err != nil {
		return Outcome{}, fmt.Errorf("row %s: reading the row: %w", keyStr, err)
	}
	if len(w.instances) == 0 {
		if rebuild {
			return Outcome{Key: key}, fmt.Errorf("row %s: no event of %v addresses the row; check the instances", keyStr, instances)
		}
		row, err := e.readRow(item)
		if err != nil {
			return Outcome{}, err
		}
		return Outcome{Key: key, State: row.item, Revision: row.revision, Removed: row.tombstone}, nil
	}
	o := e.applyRow(ctx, w, item, present)
	return o, o.Err
}
