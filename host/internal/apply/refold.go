package apply

import (
	"context"
	"errors"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// Keyed is a stream instance's events as its caller read them, from
// version 1 on, with the key the source's key function gave each.
type Keyed struct {
	Ref    InstanceRef
	Events []abi.Event
	Keys   []abi.KeyResult
}

// Refolded is what a rebuild of a row would write, computed without
// writing (Refold).
type Refolded struct {
	// Item is the item the rebuild would put (a row or a tombstone); nil
	// when it would write nothing.
	Item abi.Item
	// Outcome is the rebuild's outcome: an instance's Applied and Rejected
	// events are those after the checkpoint the row holds for it, which
	// the row has not considered yet.
	Outcome Outcome
}

// Refold re-derives a row exactly as RebuildRowAll would, without
// writing: stored is the row as the caller read it (nil: the table holds
// none), seeds the events of instances the caller has read (each folded
// as given, up to its last event), and events reads the others (those the
// row's checkpoints name or Projection.SourcesOf finds, and versions a
// seed lacks up to the row's checkpoint). The fold runs through the same
// per-row step as a rebuild: the instances the row's checkpoints name and
// those seeded, from the initial state, in fold order, with the rebuild's
// checkpoints. No effect is computed or committed.
func (e *Engine) Refold(ctx context.Context, key, stored abi.Item, seeds []Keyed, events EventReader) (Refolded, error) {
	keyStr, err := e.checkKey(key)
	if err != nil {
		return Refolded{}, err
	}
	put := &refoldStore{row: stored}
	d := *e // the same projection, reading and writing elsewhere
	d.db, d.events = put, events
	d.p.Outbox, d.p.Retry.Attempts = nil, 1
	refs := make([]InstanceRef, len(seeds))
	for i, s := range seeds {
		refs[i] = s.Ref
	}
	rw, err := d.allInstances(ctx, key, keyStr, refs)
	if err != nil {
		return Refolded{}, err
	}
	for _, s := range seeds {
		rw.seed(s.Ref, s.Events, s.Keys, keyStr)
	}
	w := &rowWork{key: key, keyStr: keyStr, rebuild: true, repair: rw, refold: true}
	if err := d.checkRefs(rw.named); err != nil {
		return Refolded{}, err
	}
	o := d.applyRow(ctx, w, stored, presence{})
	return Refolded{Item: put.item, Outcome: o}, o.Err
}

// RepairRow re-derives a row as RebuildRowAll does (which, as every
// rebuild, brings a checkpoint above its instance's head down to the head).
func (e *Engine) RepairRow(ctx context.Context, key abi.Item, also []InstanceRef) (Outcome, error) {
	return e.RebuildRowAll(ctx, key, also)
}

// KeyEvents calls the key function of the instance's source for its
// events, in one call.
func (e *Engine) KeyEvents(ctx context.Context, ref InstanceRef, evs []abi.Event) ([]abi.KeyResult, error) {
	if err := e.checkRefs([]InstanceRef{ref}); err != nil {
		return nil, err
	}
	return e.keys(ctx, ref.Source, evs)
}

// CheckKey validates a row key against the table's key attributes and
// returns its one string form (internal/keys).
func (e *Engine) CheckKey(key abi.Item) (string, error) { return e.checkKey(key) }

// NamedInstances returns the stream instances a stored item's checkpoints
// name (its map entries, the owners of its checkpoint fields), in fold
// order, with the checkpoint it holds for each.
func (e *Engine) NamedInstances(item abi.Item) ([]InstanceRef, map[InstanceRef]uint64, error) {
	row, err := e.readRow(item)
	if err != nil {
		return nil, nil, err
	}
	known := e.knownInstances(row)
	ids := make([]instanceID, 0, len(known))
	for id := range known {
		ids = append(ids, id)
	}
	e.sortFoldOrder(ids)
	refs := make([]InstanceRef, len(ids))
	cps := make(map[InstanceRef]uint64, len(ids))
	for i, id := range ids {
		refs[i] = InstanceRef{id.source, id.streamID}
		c, _, err := e.storedCheckpoint(row, id)
		if err != nil {
			return nil, nil, err
		}
		cps[refs[i]] = c
	}
	return refs, cps, nil
}

// CheckpointOf returns the checkpoint a stored item holds for an instance
// (as a rebuild reads it: a checkpoint field that records no instance is
// taken as the instance's), and where: the attribute path ("version",
// "checkpoints.<source>#<streamId>"). ok is false when it holds none; the
// path is then where the map would hold it ("" without a map).
func (e *Engine) CheckpointOf(item abi.Item, ref InstanceRef) (c uint64, path string, ok bool, err error) {
	if err := e.checkRefs([]InstanceRef{ref}); err != nil {
		return 0, "", false, err
	}
	row, err := e.readRow(item)
	if err != nil {
		return 0, "", false, err
	}
	id := instanceID{ref.Source, ref.StreamID}
	c, ok, err = e.storedCheckpoint(row, id)
	if err != nil {
		return 0, "", false, err
	}
	i := e.sourceIndex(ref.Source)
	if sc := e.scal[i]; sc.Field != "" && (sc.InstanceField == "" || row.owners[i] == ref.StreamID) {
		if _, has := row.stored[sc.Field]; has || e.p.Checkpoint.Map == "" {
			return c, sc.Field, ok, nil
		}
	}
	if e.p.Checkpoint.Map == "" {
		return c, "", ok, nil
	}
	return c, e.p.Checkpoint.Map + "." + mapKey(id), ok, nil
}

// EngineAttrs lists the attributes of a row that the engine sets rather
// than the plugin's toItem: checkpoints (fields, instance fields, map),
// the revision, the TTL attribute, createdAt, writtenBy and the versions
// before it (WrittenByBefore).
func (e *Engine) EngineAttrs() []string {
	out := e.keptAttrs()
	for _, a := range []string{e.p.CreatedAt, e.p.WrittenBy} {
		if a != "" {
			out = append(out, a)
		}
	}
	if e.p.WrittenBy != "" {
		out = append(out, WrittenByBefore(e.p.WrittenBy))
	}
	return out
}

// IsOutboxItem reports whether a stored item is an outbox item.
func IsOutboxItem(it abi.Item) bool {
	v, ok := it[MarkerAttr]
	return ok && v.Kind == abi.KindS && strings.HasSuffix(v.Str, OutboxSuffix)
}

// refoldStore is the store of a Refold: the row reads as given, and the
// one put is kept instead of written.
type refoldStore struct {
	row  abi.Item
	item abi.Item
}

var errRefoldWrites = errors.New("a refold writes nothing")

func (s *refoldStore) GetItem(context.Context, string, abi.Item) (abi.Item, error) {
	return abi.CloneItem(s.row), nil
}

func (s *refoldStore) BatchGetItem(context.Context, string, []abi.Item) ([]abi.Item, error) {
	return nil, errRefoldWrites
}

func (s *refoldStore) PutItem(_ context.Context, p store.Put) error {
	s.item = abi.CloneItem(p.Item)
	return nil
}

func (s *refoldStore) UpdateItem(context.Context, store.Update) (abi.Item, error) {
	return nil, errRefoldWrites
}

func (s *refoldStore) DeleteItem(context.Context, store.Delete) error { return errRefoldWrites }

func (s *refoldStore) TransactWriteItems(context.Context, []store.Write) error {
	return errRefoldWrites
}

func (s *refoldStore) Query(context.Context, store.Query) (store.Page, error) {
	return store.Page{}, errRefoldWrites
}
