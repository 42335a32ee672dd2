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
// state) and writes every checkpoint from scratch with the next revision,
// in one write conditioned on the row as read; a lost race reads the row
// again and redoes the fold. A field-mapped checkpoint goes to the first
// instance in fold order, which repairs a row adopted by the wrong
// instance. An instance the row does not name loses its part and its
// checkpoint: name every instance that feeds the row.
//
// Without instances, Projection.SourcesOf finds them, or else the row's own
// checkpoints (read again by every attempt, so an instance the live feed
// adds meanwhile is folded too).
//
// Events the row had already considered (up to the checkpoint it holds for
// their instance) are folded without committing their effects and are not
// reported; events after that checkpoint (all of them, for an instance the
// row holds no checkpoint for) are applied as a delivery would apply them,
// effects included, and reported in the outcome. When the table holds no
// row for the key, not even a tombstone, the rebuild is history (a new
// read model or table): every event is folded without effects and none is
// reported. No checkpoint is written below the one the row held.
//
// When the fold makes no row (every event skipped or rejected) while the
// table holds one, nothing is written and the error matches
// ErrRebuildFoldsNoRow.
func (e *Engine) RebuildRow(ctx context.Context, key abi.Item, instances []InstanceRef) (Outcome, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Outcome{}, err
	}
	rw := newRepair(instances, false)
	if len(instances) == 0 {
		if e.p.SourcesOf != nil {
			if rw.named, err = e.p.SourcesOf(ctx, key); err != nil {
				return Outcome{}, fmt.Errorf("rebuild of row %s: finding its stream instances: %w", keyStr, err)
			}
		} else {
			rw.known = true
		}
	}
	o := e.repairRow(ctx, key, keyStr, rw, true)
	return o, o.Err
}

// RebuildRowAll re-derives a row from every stream instance that feeds it,
// as RebuildRow does: those its checkpoints name (read again by every
// attempt), those Projection.SourcesOf finds, and those given. A row fed by
// a source whose checkpoint field records no instance, when no instance of
// that source is given or found, is refused (ErrUnnamedInstance): the
// rebuild would drop that source's part.
func (e *Engine) RebuildRowAll(ctx context.Context, key abi.Item, also []InstanceRef) (Outcome, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Outcome{}, err
	}
	rw, err := e.allInstances(ctx, key, keyStr, also)
	if err != nil {
		return Outcome{}, err
	}
	o := e.repairRow(ctx, key, keyStr, rw, true)
	return o, o.Err
}

// allInstances is the repair of a row from every instance that feeds it.
func (e *Engine) allInstances(ctx context.Context, key abi.Item, keyStr string, also []InstanceRef) (*repairWork, error) {
	named := append([]InstanceRef(nil), also...)
	if e.p.SourcesOf != nil {
		found, err := e.p.SourcesOf(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("rebuild of row %s: finding its stream instances: %w", keyStr, err)
		}
		named = append(named, found...)
	}
	return newRepair(named, true), nil
}

// CatchUpRow brings every stream instance the row's checkpoints know (its
// map entries and the owners of its checkpoint fields), and the instances
// given, up to the instance's head: it reads each one's events after its
// checkpoint and applies those keyed to the row, in one write, as a
// delivery would. Every attempt starts from the checkpoints the row holds
// then, so an event the live feed applied meanwhile is never applied
// twice.
func (e *Engine) CatchUpRow(ctx context.Context, key abi.Item, also ...InstanceRef) (Outcome, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Outcome{}, err
	}
	o := e.repairRow(ctx, key, keyStr, newRepair(also, true), false)
	return o, o.Err
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
	known := e.knownInstances(row)
	after := make(map[InstanceRef]uint64, len(known))
	ids := make([]instanceID, 0, len(known))
	for id, field := range known {
		c := row.entries[mapKey(id)]
		if field >= 0 {
			if c, err = row.fieldCheckpoint(e.scal[field]); err != nil {
				return nil, nil, err
			}
		}
		after[InstanceRef{id.source, id.streamID}] = c
		ids = append(ids, id)
	}
	e.sortFoldOrder(ids)
	out := make([]InstanceRef, len(ids))
	for i, id := range ids {
		out[i] = InstanceRef{id.source, id.streamID}
	}
	if len(out) == 0 {
		return nil, nil, ErrNoInstances
	}
	return out, after, nil
}

// knownInstances returns the instances the row's checkpoints name: the
// owner of each checkpoint field (with its source's index) and each entry
// of the checkpoint map (-1; an entry wins over a field naming the same
// instance). An entry of a source the projection does not have is left
// out, with a warning.
func (e *Engine) knownInstances(row *rowState) map[instanceID]int {
	out := map[instanceID]int{}
	for i, owner := range row.owners {
		if owner != "" {
			out[instanceID{e.p.Sources[i].Name, owner}] = i
		}
	}
	for k := range row.entries {
		src, id, ok := strings.Cut(k, "#")
		if !ok || e.sourceIndex(src) < 0 {
			e.p.Logger.Warn("the row's checkpoint map names an unknown source; its entry is left out", "entry", k)
			continue
		}
		out[instanceID{src, id}] = -1
	}
	return out
}

// sortFoldOrder sorts instances in fold order: by source, then stream id.
func (e *Engine) sortFoldOrder(ids []instanceID) {
	sort.Slice(ids, func(i, j int) bool {
		si, sj := e.sourceIndex(ids[i].source), e.sourceIndex(ids[j].source)
		if si != sj {
			return si < sj
		}
		return ids[i].streamID < ids[j].streamID
	})
}

func (e *Engine) sourceIndex(name string) int {
	for i, s := range e.p.Sources {
		if s.Name == name {
			return i
		}
	}
	return -1
}
