// Package apply is the projection engine: the one per-row apply step that
// serves every projection kind (ENGINE.md). Per call it groups events by
// row, reads the rows strongly consistent in batches, sorts and
// de-duplicates each row's events, fills gaps from the event store with one
// bounded consistent read, folds the run through the projection's logic in
// one call and writes the row once, conditioned on what it read.
//
// A single-source projection is the configuration with one source; the
// engine keeps checkpoints per source instance so that multi-source rows are
// the same step with more instances.
package apply

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/logic"
)

// EventReader reads a stream instance's events from the event store,
// strongly consistent: every version in (after, to], in version order; to 0
// reads to the stream's head.
type EventReader interface {
	ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error)
}

// ErrBadEventItem is matched by an EventReader's error when an item of the
// range read is not a valid event (a malformed item, or one stored under
// another stream instance's or version's key). A gap-fill read that meets
// one fails the source instance whose range it is, not the whole row: the
// instance's events leave the write and its checkpoint stays below the
// item, so nothing is folded past it until it is repaired.
var ErrBadEventItem = errors.New("the event store holds an item that is not a valid event")

// Source is one source of a projection: the stream it reads.
type Source struct {
	Name   string // unique within the projection; a single source may be named after its stream
	Stream string // the stream's name
	Mode   string // abi.ModeFold (default) or abi.ModeLatest
}

// Checkpoint says where a row keeps its checkpoints: one per source
// instance, each the last version considered for the row.
//
// Field maps one instance's checkpoint onto a numeric field of the row:
// the stored value is version + Offset. An absent field reads as
// "nothing applied yet". The field follows an instance of the first source:
// with InstanceField, the row records which stream id owns it (an empty one
// is adopted by the first instance that writes the row); without it, the row
// can be fed by one instance only.
//
// Map names a map attribute holding the checkpoints of every other instance,
// by "<source>#<streamId>". Without a map, an instance that does not own
// Field fails with ErrProjectionSourceConflict.
//
// Sources gives sources their own field instead, by source name: each
// with its own offset and instance field. The field of the first source
// may be given either way.
type Checkpoint struct {
	Field         string
	Offset        int64
	InstanceField string
	Map           string
	Sources       map[string]Scalar
}

// Revision is the row's write counter and guard: every write sets
// it one higher, conditioned on the value read.
type Revision struct {
	Field   string
	Initial *int64 // the value of a row's first write (nil: 1); 0 is allowed
}

// Removal lets evolve remove rows: a removed row becomes a tombstone, not a
// deletion. The tombstone is the row's key, the marker attribute
// MarkerAttr = "<EntityType>#tombstone", the checkpoints (field, instance
// field, map) and the revision (one higher), and nothing else; with TTL,
// also TTLAttribute, the epoch second at which DynamoDB may expire it.
// Every read by key reports a tombstone as absent, but the engine keeps its
// checkpoints, so a redelivered event is already applied and a later event
// starts the row again from initial.
type Removal struct {
	EntityType   string        // the read model's entity type (required)
	TTL          time.Duration // 0: tombstones are kept for good
	TTLAttribute string        // the table's TTL attribute (required with TTL)
}

// MarkerAttr is the attribute marking a tombstone: "<entityType>#tombstone".
const MarkerAttr = "__edd_e__"

// TombstoneSuffix ends the marker of a tombstone.
const TombstoneSuffix = "#tombstone"

// IsTombstone reports whether a stored item is a tombstone: its MarkerAttr
// is a string ending in TombstoneSuffix. A nil item is none.
func IsTombstone(it abi.Item) bool {
	v, ok := it[MarkerAttr]
	return ok && v.Kind == abi.KindS && strings.HasSuffix(v.Str, TombstoneSuffix)
}

// Retry is the lost-race policy: Attempts tries in all. The first retry
// goes at once; the n-th waits a jittered Base × 2^(n-1), at most Max.
type Retry struct {
	Attempts int           // default 12
	Base     time.Duration // default 5ms
	Max      time.Duration // default 200ms
}

// Projection configures the engine for one projection.
type Projection struct {
	Name       string      // the projection's name, used in outcomes and errors
	Table      string      // the read-model table
	KeyAttrs   []string    // the table's key attribute names (hash, then range)
	Sources    []Source    // in declaration order; one for a single-source projection
	Checkpoint Checkpoint  // single-source checkpoint field (required without Revision)
	Revision   *Revision   // optional for single-source projections
	Removal    *Removal    // nil: a removeRow from evolve fails the row
	Outbox     *Outbox     // nil: effects are not committed
	CreatedAt  string      // attribute keeping the row's creation time ("" disables it)
	WrittenBy  string      // attribute recording the plugin that wrote the row ("" disables it)
	Logic      logic.Logic // the domain logic
	// CheckEffects checks every effect the logic returns against
	// DynamoDB's rules, as the engine does when an outbox commits them:
	// for an offline fold (a smoke test) without an outbox.
	CheckEffects bool
	// NoOutputCheck turns the check of the logic's output off: only for the
	// benchmark that measures what the check costs.
	NoOutputCheck bool
	SourcesOf     SourcesOf // finds a row's stream instances for RebuildRow (nil: the row's checkpoints)
	Rows          int       // rows processed concurrently (default 100)
	// ReadNewRows reads every row before its write, even a row whose
	// events are the first of their streams (fresh.go): such a row is
	// otherwise written without a read, on condition that it does not
	// exist, and read only when it does.
	ReadNewRows bool
	Retry       Retry   // lost-race policy
	Limit       Limiter // waited on before a batch is applied (nil: no limit)
	Now         func() time.Time
	Logger      *slog.Logger
}

// DefaultRows is the number of rows a call processes at once when
// Projection.Rows is 0: every row of a call of up to 100 rows, so that the
// call costs each row's round trips (read, gap read, write, delivery) once
// rather than once per wave of rows.
const DefaultRows = 100

// ErrConfig marks a projection configuration that cannot work.
var ErrConfig = errors.New("invalid projection configuration")

func (p *Projection) setDefaults() {
	if p.Rows <= 0 {
		p.Rows = DefaultRows
	}
	if p.Retry.Attempts <= 0 {
		p.Retry.Attempts = 12
	}
	if p.Retry.Base <= 0 {
		p.Retry.Base = 5 * time.Millisecond
	}
	if p.Retry.Max <= 0 {
		p.Retry.Max = 200 * time.Millisecond
	}
	if p.Revision != nil {
		r := *p.Revision // the caller's Revision is not modified
		if r.Initial == nil {
			one := int64(1)
			r.Initial = &one
		}
		p.Revision = &r
	}
	if p.Removal != nil {
		r := *p.Removal
		p.Removal = &r
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	for i := range p.Sources {
		if p.Sources[i].Mode == "" {
			p.Sources[i].Mode = abi.ModeFold
		}
		if p.Sources[i].Name == "" {
			p.Sources[i].Name = p.Sources[i].Stream
		}
	}
}

// Validate reports a configuration that cannot work, with [EDD-9081] where
// the reference names that code.
func (p *Projection) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("projection %q: %w: "+format, append([]any{p.Name, ErrConfig}, args...)...)
	}
	switch {
	case p.Name == "":
		return fmt.Errorf("%w: a projection needs a name", ErrConfig)
	case p.Table == "":
		return bad("no read-model table")
	case len(p.KeyAttrs) == 0 || len(p.KeyAttrs) > 2:
		return bad("the read-model table needs 1 or 2 key attributes, got %v", p.KeyAttrs)
	case len(p.Sources) == 0:
		return bad("no source stream")
	case p.Logic == nil:
		return bad("no logic (plugin)")
	case len(p.Sources) > 1 && p.Revision == nil:
		return bad("a multi-source projection needs a revision field")
	case p.Revision == nil && p.Checkpoint.Field == "" && len(p.Checkpoint.Sources) == 0:
		return bad("no checkpoint field: name the numeric field that holds the last applied version")
	case p.Revision != nil && p.Checkpoint.Field == "" && p.Checkpoint.Map == "" && len(p.Checkpoint.Sources) == 0:
		return bad("a revision keeps no checkpoint: without a checkpoint field or map every redelivery would fold its events again; name the checkpoint map (one entry per stream instance) or the checkpoint field")
	case p.Checkpoint.Map != "" && p.Revision == nil:
		return bad("a checkpoint map needs a revision field: the revision guards the write of a row that several stream instances feed")
	case p.Checkpoint.InstanceField != "" && p.Checkpoint.Field == "":
		return bad("an instance field records which stream instance the checkpoint field follows, but there is no checkpoint field; name it, or remove the instance field")
	case p.Checkpoint.Field != "" && p.Checkpoint.Map != "" && p.Checkpoint.InstanceField == "":
		return bad("with both a checkpoint field and a map, a row must record which stream instance the field follows: name the instance field (a string attribute)")
	}
	if err := p.validateScalars(bad); err != nil {
		return err
	}
	if r := p.Removal; r != nil {
		switch {
		case r.EntityType == "":
			return bad("removal needs the read model's entity type: tombstones are marked %s = \"<entityType>%s\"", MarkerAttr, TombstoneSuffix)
		case r.TTL < 0:
			return bad("removal TTL %s is negative: use a positive duration, or 0 to keep tombstones", r.TTL)
		case r.TTL > 0 && r.TTLAttribute == "":
			return bad("removal TTL %s needs the table's TTL attribute: name it", r.TTL)
		case r.TTL == 0 && r.TTLAttribute != "":
			return bad("removal names the TTL attribute %q but no TTL: set the TTL, or remove the attribute", r.TTLAttribute)
		}
	}
	if err := p.validateOutbox(); err != nil {
		return err
	}
	engine := map[string]string{}
	for _, f := range append([]struct{ what, name string }{
		{"checkpoint field", p.Checkpoint.Field},
		{"instance field", p.Checkpoint.InstanceField},
		{"checkpoint map", p.Checkpoint.Map},
		{"revision field", revisionField(p.Revision)},
		{"tombstone marker", removalMarker(p.Removal)},
		{"TTL attribute", ttlAttribute(p.Removal)},
	}, p.scalarAttrs()...) {
		if f.name == "" {
			continue
		}
		if other, ok := engine[f.name]; ok {
			return bad("[EDD-9081] the %s %q is also the %s: each attribute can hold one thing", f.what, f.name, other)
		}
		engine[f.name] = f.what
	}
	for _, k := range p.KeyAttrs {
		if k == p.Checkpoint.Field {
			return bad("[EDD-9081] the checkpoint field %q is a key attribute: a row's key cannot change with every write", k)
		}
		if what, ok := engine[k]; ok {
			return bad("[EDD-9081] the %s %q is a key attribute", what, k)
		}
	}
	seen := map[string]bool{}
	for _, s := range p.Sources {
		if seen[s.Name] {
			return bad("two sources named %q", s.Name)
		}
		seen[s.Name] = true
		if s.Mode != abi.ModeFold && s.Mode != abi.ModeLatest {
			return bad("source %q: mode %q is neither %q nor %q", s.Name, s.Mode, abi.ModeFold, abi.ModeLatest)
		}
	}
	return nil
}

func removalMarker(r *Removal) string {
	if r == nil {
		return ""
	}
	return MarkerAttr
}

func ttlAttribute(r *Removal) string {
	if r == nil {
		return ""
	}
	return r.TTLAttribute
}

func revisionField(r *Revision) string {
	if r == nil {
		return ""
	}
	return r.Field
}

// Engine applies batches of events to one projection's rows.
type Engine struct {
	p      Projection
	scal   []Scalar // each source's scalar checkpoint, by declaration index
	db     store.DB
	events EventReader
	plugin string
	// createCond is the condition of a write that creates a row
	// (writeCond), one for every such write: conditions are only read.
	createCond *store.Cond
	// doubt is how often fresh rows turned out to exist (fresh.go);
	// shared by the engine's copies (Refold).
	doubt *atomic.Int32
	// gapDoubt is how often gap-shaped rows needed no gap read
	// (prefetch.go); shared by the engine's copies.
	gapDoubt *atomic.Int32
}

// New returns an engine for projection p, reading rows through db and gap
// events through events.
func New(p Projection, db store.DB, events EventReader) (*Engine, error) {
	p.setDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := p.Logic.Describe()
	gapDoubt := new(atomic.Int32)
	gapDoubt.Store(gapDoubtStart)
	return &Engine{p: p, scal: p.scalars(), db: db, events: events, plugin: d.Name + "@" + d.Version, doubt: new(atomic.Int32), gapDoubt: gapDoubt,
		createCond: &store.Cond{Expr: "attribute_not_exists(#k)", Names: map[string]string{"#k": p.KeyAttrs[0]}}}, nil
}

// Projection returns the engine's configuration (with defaults applied).
func (e *Engine) Projection() Projection { return e.p }

// Streams returns the names of the streams the projection reads.
func (e *Engine) Streams() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range e.p.Sources {
		if !seen[s.Stream] {
			seen[s.Stream] = true
			out = append(out, s.Stream)
		}
	}
	return out
}
