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
// plugin's initial state (the row's state and checkpoints are ignored),
// and every checkpoint is written from scratch with the next revision, in
// one write conditioned on the row as read. A checkpoint field goes to the
// first instance in fold order (sources in declaration order, then stream
// id), which repairs a row adopted by the wrong instance. Without
// instances, the function given to WithSourcesOf finds them, or else the
// row's checkpoints. The outcome carries no events, so a rebuild never
// replays side effects.
func (h *Host) RebuildRow(ctx context.Context, projection string, key abi.Item, instances ...InstanceRef) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.RebuildRow(ctx, key, engineRefs(instances))
	return outcomeOf(o), err
}

// CatchUpRow brings every stream instance a row's checkpoints know up to
// its head: each instance's events after its checkpoint that are keyed to
// the row are applied, in one write, as a delivery would apply them. For a
// row whose last events were set aside (dead-lettered).
func (h *Host) CatchUpRow(ctx context.Context, projection string, key abi.Item) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.CatchUpRow(ctx, key)
	return outcomeOf(o), err
}
