package apply

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/backoff"
)

// ErrRowExists is the error of CreateRow where a row (not a tombstone)
// exists already.
var ErrRowExists = errors.New("the row exists")

// ErrProjectionAttribute is the error of CreateRow given an item that sets
// an attribute the projection keeps itself.
var ErrProjectionAttribute = errors.New("the item sets an attribute the projection keeps")

// CreateRow writes item as a new row of the projection's table, the way
// the projection's own writes treat tombstones:
//
//   - where no item is, conditioned on there still being none (with the
//     revision's initial value, when the projection has a revision);
//   - where a tombstone is, over it: the tombstone's checkpoints (fields,
//     instance fields, map) are carried into the row and the revision is
//     set one higher, conditioned on the tombstone as read, so a late
//     redelivery of an event the removed row had folded is still already
//     applied and cannot undo the created row;
//   - where a row is, not at all: ErrRowExists.
//
// A lost race (another writer in between) is read again and retried under
// the projection's retry policy, then fails with ErrConcurrentModification.
// item must hold the key and may not set the projection's checkpoints or
// revision, nor be marked as a tombstone (ErrProjectionAttribute). It returns the item written.
func (e *Engine) CreateRow(ctx context.Context, item abi.Item) (abi.Item, error) {
	key := abi.Item{}
	for _, k := range e.p.KeyAttrs {
		if v, ok := item[k]; ok {
			key[k] = v
		}
	}
	ks, err := e.checkKey(key)
	if err != nil {
		return nil, fmt.Errorf("creating a row of %s: %w", e.p.Table, err)
	}
	for _, a := range e.keptAttrs() {
		if _, ok := item[a]; ok {
			return nil, fmt.Errorf("creating row %s: %w: %q; leave it out, the projection sets it", ks, ErrProjectionAttribute, a)
		}
	}
	if isEngineItem(item) {
		return nil, fmt.Errorf("creating row %s: %w: %s = %q marks a tombstone or an outbox item, not a row", ks, ErrProjectionAttribute, MarkerAttr, item[MarkerAttr].Str)
	}
	for attempt := 1; ; attempt++ {
		read, err := e.db.GetItem(ctx, e.p.Table, key)
		if err != nil {
			return nil, fmt.Errorf("creating row %s: reading it: %w", ks, err)
		}
		if read != nil && !IsTombstone(read) {
			return nil, fmt.Errorf("creating row %s: %w in %s", ks, ErrRowExists, e.p.Table)
		}
		it, cond, err := e.createOver(item, read)
		if err != nil {
			return nil, fmt.Errorf("creating row %s: %w", ks, err)
		}
		err = e.db.PutItem(ctx, store.Put{Table: e.p.Table, Item: it, Cond: cond})
		if err == nil {
			return it, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, fmt.Errorf("creating row %s: %w", ks, err)
		}
		if attempt >= e.p.Retry.Attempts {
			return nil, fmt.Errorf("creating row %s: %w: another writer changed it %d times in a row", ks, ErrConcurrentModification, attempt)
		}
		if err := (backoff.Policy{Base: e.p.Retry.Base, Max: e.p.Retry.Max}).Wait(ctx, attempt); err != nil {
			return nil, fmt.Errorf("creating row %s: %w", ks, err)
		}
	}
}

// createOver returns the item to put for a create over read (nil: none,
// else a tombstone) and the put's condition.
func (e *Engine) createOver(item, read abi.Item) (abi.Item, *store.Cond, error) {
	it := abi.CloneItem(item)
	if e.p.CreatedAt != "" {
		if _, ok := it[e.p.CreatedAt]; !ok {
			it[e.p.CreatedAt] = abi.S(e.p.Now().UTC().Format(time.RFC3339Nano))
		}
	}
	cond := &store.Cond{Names: map[string]string{}, Values: map[string]abi.Value{}}
	if read == nil {
		cond.Expr = "attribute_not_exists(#k)"
		cond.Names["#k"] = e.p.KeyAttrs[0]
		if r := e.p.Revision; r != nil {
			it[r.Field] = abi.N(strconv.FormatInt(*r.Initial, 10))
		}
		return it, cond, nil
	}
	row, err := e.readRow(read)
	if err != nil {
		return nil, nil, fmt.Errorf("the tombstone there: %w", err)
	}
	for _, a := range e.checkpointAttrs() {
		if v, ok := read[a]; ok {
			it[a] = v
		}
	}
	cond.Expr = "#m = :m"
	cond.Names["#m"] = MarkerAttr
	cond.Values[":m"] = read[MarkerAttr]
	guarded := e.p.Checkpoint.Field // without a revision the checkpoint guards the row
	if r := e.p.Revision; r != nil {
		it[r.Field] = abi.N(strconv.FormatInt(row.nextRevision(r), 10))
		guarded = r.Field
	}
	if guarded != "" {
		cond.Names["#g"] = guarded
		if v, ok := read[guarded]; ok {
			cond.Expr += " AND #g = :g"
			cond.Values[":g"] = v
		} else {
			cond.Expr += " AND attribute_not_exists(#g)"
		}
	}
	return it, cond, nil
}

// checkpointAttrs lists the attributes holding the row's checkpoints.
func (e *Engine) checkpointAttrs() []string {
	var out []string
	for _, sc := range e.scal {
		for _, a := range []string{sc.Field, sc.InstanceField} {
			if a != "" {
				out = append(out, a)
			}
		}
	}
	if e.p.Checkpoint.Map != "" {
		out = append(out, e.p.Checkpoint.Map)
	}
	return out
}

// keptAttrs lists the attributes the projection sets itself.
func (e *Engine) keptAttrs() []string {
	out := e.checkpointAttrs()
	if e.p.Revision != nil {
		out = append(out, e.p.Revision.Field)
	}
	if r := e.p.Removal; r != nil && r.TTLAttribute != "" {
		out = append(out, r.TTLAttribute)
	}
	return out
}
