package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// InstanceRef names a stream instance read by one of a projection's
// sources: the source's name (as the plugin declares it) and the stream id.
type InstanceRef struct {
	Source   string
	StreamID string
}

// String is "<source>#<streamId>", as the row's checkpoint map names it.
func (r InstanceRef) String() string { return r.Source + "#" + r.StreamID }

// ParseInstanceRef reads "<source>#<streamId>" (the stream id may itself
// contain #).
func ParseInstanceRef(s string) (InstanceRef, error) {
	src, id, ok := strings.Cut(s, "#")
	if !ok || src == "" || id == "" {
		return InstanceRef{}, fmt.Errorf("instance %q is not <source>#<streamId>, e.g. weigh#w-1", s)
	}
	return InstanceRef{Source: src, StreamID: id}, nil
}

// ErrNoInstances is matched by RebuildRow and CatchUpRow when no stream
// instance is known for the row: none given, and none in its checkpoints.
var ErrNoInstances = apply.ErrNoInstances

// ErrUnnamedInstance is matched by the error of a rebuild from every
// instance of a row (Rebuild, RebuildInstance, RebuildRowAll, a backfill)
// that the row cannot name all of: a source's checkpoint field without an
// instance field does not say which instance feeds it. Rebuild such a row
// with RebuildRow, naming every instance (`host rebuild --row`).
var ErrUnnamedInstance = apply.ErrUnnamedInstance

// ErrRebuildFoldsNoRow is matched by the error of a rebuild that wrote
// nothing because the instances' events, folded from the plugin's initial
// state, make no row (every one skipped or rejected) while the table holds
// one: the row is left as it was.
var ErrRebuildFoldsNoRow = apply.ErrRebuildFoldsNoRow

// SourceRef is one source of a projection: its name, as the plugin
// declares it, and the stream it reads.
type SourceRef struct {
	Name   string
	Stream string
}

// OneInstancePerRow reports whether every row of a projection is fed by
// one stream instance at most: one source whose checkpoint is a field
// without an instance field or map. A backfill can then rebuild stream by
// stream; otherwise it first finds every instance that feeds each row.
func (h *Host) OneInstancePerRow(projection string) (bool, error) {
	e, err := h.engine(projection)
	if err != nil {
		return false, err
	}
	p := e.Projection()
	return len(p.Sources) == 1 && p.Checkpoint.Map == "" && p.Checkpoint.InstanceField == "" && len(p.Checkpoint.Sources) == 0, nil
}

// ProjectionSources returns the sources of a projection, in declaration
// order.
func (h *Host) ProjectionSources(projection string) ([]SourceRef, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	var out []SourceRef
	for _, s := range e.Projection().Sources {
		out = append(out, SourceRef{Name: s.Name, Stream: s.Stream})
	}
	return out, nil
}

// SourcesOf finds the stream instances that feed a row (for example over
// an index of streams by row), for RebuildRow called without instances.
type SourcesOf func(ctx context.Context, key abi.Item) ([]InstanceRef, error)

func (f SourcesOf) engine() apply.SourcesOf {
	return func(ctx context.Context, key abi.Item) ([]apply.InstanceRef, error) {
		refs, err := f(ctx, key)
		return engineRefs(refs), err
	}
}

func engineRefs(refs []InstanceRef) []apply.InstanceRef {
	out := make([]apply.InstanceRef, len(refs))
	for i, r := range refs {
		out[i] = apply.InstanceRef{Source: r.Source, StreamID: r.StreamID}
	}
	return out
}

// WithSourcesOf sets how RebuildRow finds a projection's row's stream
// instances when it is given none. Without it, the row's own checkpoints
// name them: its checkpoint-map entries and the owners of its checkpoint
// fields.
func WithSourcesOf(projection string, f SourcesOf) Option {
	return func(o *options) {
		if o.sourcesOf == nil {
			o.sourcesOf = map[string]SourcesOf{}
		}
		o.sourcesOf[projection] = f
	}
}

// RebuildRow re-derives one row of a projection from the given stream
// instances: each instance's events keyed to the row are folded from the
// plugin's initial state (the row's state is ignored), and every checkpoint
// is written from scratch with the next revision, in one write conditioned
// on the row as read (a lost race reads the row again and redoes the
// fold). A checkpoint field goes to the first instance in fold order
// (sources in declaration order, then stream id), which repairs a row
// adopted by the wrong instance. An instance the row has and that is not
// given loses its part and its checkpoint. Without instances, the function
// given to WithSourcesOf finds them, or else the row's checkpoints.
//
// Events the row had already considered are folded without committing
// their effects and are not reported, so a rebuild never replays side
// effects; events after the row's checkpoints (never delivered, or in
// flight) are applied as a delivery would apply them, effects included,
// and reported. A row the table does not hold is rebuilt as history,
// without effects. No checkpoint is written below the one the row held.
// When the fold makes no row (every event skipped or rejected) while the
// table holds one, nothing is written and the error matches
// ErrRebuildFoldsNoRow.
func (h *Host) RebuildRow(ctx context.Context, projection string, key abi.Item, instances ...InstanceRef) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.RebuildRow(ctx, key, engineRefs(instances))
	return outcomeOf(o), err
}

// RowInstances returns the stream instances a row's checkpoints name (its
// checkpoint-map entries and the owners of its checkpoint fields), in fold
// order, read strongly consistent; none for a row the table does not hold.
// A rebuild from named instances drops the part of any it leaves out.
func (h *Host) RowInstances(ctx context.Context, projection string, key abi.Item) ([]InstanceRef, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	item, err := h.db.GetItem(ctx, e.Projection().Table, key)
	if err != nil || item == nil {
		return nil, err
	}
	refs, _, err := e.NamedInstances(item)
	if err != nil {
		return nil, err
	}
	out := make([]InstanceRef, len(refs))
	for i, r := range refs {
		out[i] = InstanceRef{Source: r.Source, StreamID: r.StreamID}
	}
	return out, nil
}

// RebuildRowAll re-derives one row from every stream instance that feeds
// it, as RebuildRow does: the instances its checkpoints name (read again by
// every attempt, so one the live feed adds meanwhile is kept), those the
// WithSourcesOf function finds, and those given. When a source of the row
// keeps its checkpoint in a field that does not record its instance, and no
// instance of it is given or found, the rebuild is refused
// (ErrUnnamedInstance) rather than drop that source's part.
func (h *Host) RebuildRowAll(ctx context.Context, projection string, key abi.Item, also ...InstanceRef) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.RebuildRowAll(ctx, key, engineRefs(also))
	return outcomeOf(o), err
}

// CatchUpRow brings every stream instance a row's checkpoints know, and
// those given, up to its head: each instance's events after its checkpoint
// that are keyed to the row are applied, in one write, as a delivery would
// apply them (effects included). Every attempt starts from the checkpoints
// the row holds then, so an event the live feed applied meanwhile is never
// applied twice. For a row whose last events were set aside
// (dead-lettered).
func (h *Host) CatchUpRow(ctx context.Context, projection string, key abi.Item, also ...InstanceRef) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.CatchUpRow(ctx, key, engineRefs(also)...)
	return outcomeOf(o), err
}
