package apply

import (
	"context"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// write puts the folded row once, conditioned on what was read: the
// revision when the projection has one, else the checkpoint.
//
// A run that ends with the row removed writes a tombstone instead: the key,
// the marker "<entityType>#tombstone", the checkpoints, the revision (and the
// TTL attribute), nothing else.
//
// With an outbox, the effects of the applied events go with the row (or the
// tombstone) in one transaction (put).
func (e *Engine) write(ctx context.Context, w *rowWork, row *rowState, runs []*run, f *folded) (abi.Item, error) {
	removed := f.resp.Removed
	it := make(abi.Item, e.itemRoom(w, f))
	if !removed {
		for k, v := range f.resp.Item {
			if !v.IsZero() {
				it[k] = v
			}
		}
	}
	for k, v := range w.key {
		it[k] = v
	}
	e.setCheckpoints(it, w, row, runs, f)
	cond := e.writeCond(row)
	var revision int64
	if r := e.p.Revision; r != nil {
		revision = row.nextRevision(r)
		it[r.Field] = abi.N(strconv.FormatInt(revision, 10))
	}
	if removed {
		rm := e.p.Removal
		it[MarkerAttr] = abi.S(rm.EntityType + TombstoneSuffix)
		if rm.TTL > 0 {
			it[rm.TTLAttribute] = abi.N(strconv.FormatInt(e.p.Now().Add(rm.TTL).Unix(), 10))
		}
		err := e.put(ctx, w, runs, f, it, cond, revision)
		return it, err
	}
	if e.p.CreatedAt != "" {
		// A row started again after a removal (over a tombstone, or
		// removed earlier in this run) is created anew.
		if v, ok := row.item[e.p.CreatedAt]; ok && !f.removedAny {
			it[e.p.CreatedAt] = v
		} else {
			it[e.p.CreatedAt] = abi.S(e.p.Now().UTC().Format(time.RFC3339Nano))
		}
	}
	if e.p.WrittenBy != "" {
		by := f.by
		if by == "" {
			by = e.plugin
		}
		it[e.p.WrittenBy] = abi.S(by)
		if before := writersBefore(w, row, e.p.WrittenBy, by); len(before) > 0 {
			it[WrittenByBefore(e.p.WrittenBy)] = abi.L(before...)
		}
	}
	if p := itemcheck.TooLarge(it); p != nil && !e.p.NoOutputCheck {
		return nil, itemTooLarge{e.outputError(f, f.last, "to_item", p)}
	}
	err := e.put(ctx, w, runs, f, it, cond, revision)
	return it, err
}

// itemRoom is the number of attributes write may put in the row's item:
// the plugin's, and of the key, checkpoints, revision and the other fields
// the engine sets those the plugin's item lacks. The map is made that
// large: a map of up to 8 entries is one group of slots, and one made for
// more is a table of two or more (each 1,280 bytes with abi.Value's size),
// so a hint of every field the engine could add, counted twice when the
// plugin's item has it too, made most rows' maps twice the size they need.
func (e *Engine) itemRoom(w *rowWork, f *folded) int {
	removed := f.resp.Removed
	n := 0
	if !removed {
		n = len(f.resp.Item)
	}
	add := func(name string) {
		if name == "" {
			return
		}
		if !removed {
			if _, ok := f.resp.Item[name]; ok {
				return
			}
		}
		n++
	}
	for k := range w.key {
		add(k)
	}
	for _, sc := range e.scal {
		add(sc.Field)
		add(sc.InstanceField)
	}
	add(e.p.Checkpoint.Map)
	if r := e.p.Revision; r != nil {
		add(r.Field)
	}
	if removed {
		return n + 2 // the marker and the TTL
	}
	add(e.p.CreatedAt)
	add(e.p.WrittenBy)
	if e.p.WrittenBy != "" {
		add(WrittenByBefore(e.p.WrittenBy))
	}
	return n
}

// writeCond is the condition of the row's write: that the table holds
// what was read.
//
//   - No item was read: the write creates the row, conditioned on the key's
//     absence, so that a row another writer created meanwhile (Host.CreateRow,
//     a migration), with or without checkpoints, is never put over: the
//     write loses the race and the row is read and folded again.
//   - A row or a tombstone was read: the revision still holds the value read
//     (attribute_not_exists when absent), or without a revision the
//     checkpoint field. Over a tombstone, the tombstone's marker must still
//     be there too: a row created over it carries its checkpoints, so the
//     checkpoint alone would not tell them apart.
func (e *Engine) writeCond(row *rowState) *store.Cond {
	if row.stored == nil {
		return e.createCond
	}
	c := &store.Cond{Names: make(map[string]string, 2), Values: make(map[string]abi.Value, 2)}
	field := e.p.Checkpoint.Field
	if r := e.p.Revision; r != nil {
		field = r.Field
	}
	guard(c, field, row.stored)
	if row.tombstone {
		c.Expr += " AND #m = :m"
		c.Names["#m"] = MarkerAttr
		if c.Values == nil {
			c.Values = map[string]abi.Value{}
		}
		c.Values[":m"] = row.stored[MarkerAttr]
	}
	return c
}

// guard conditions the write on field still holding what was read.
func guard(c *store.Cond, field string, read abi.Item) {
	c.Names["#g"] = field
	if v, ok := read[field]; ok {
		c.Expr = "#g = :g"
		c.Values[":g"] = v
		return
	}
	c.Expr = "attribute_not_exists(#g)"
	c.Values = nil
}

// setCheckpoints puts the row's checkpoints into the item: each source's
// field (and instance field) of the instance it follows, and the map of
// the others. An instance that applied or rejected nothing keeps what the row
// had; the map is written only once it has an entry. A
// rebuild writes every checkpoint from scratch.
func (e *Engine) setCheckpoints(it abi.Item, w *rowWork, row *rowState, runs []*run, f *folded) {
	cp := e.p.Checkpoint
	read := row.stored // a tombstone's checkpoints are carried over
	if w.rebuild {
		read = nil
	}
	keep := func(field string) {
		if field == "" {
			return
		}
		if v, ok := read[field]; ok {
			it[field] = v
		} else {
			delete(it, field)
		}
	}
	for _, sc := range e.scal {
		keep(sc.Field)
		keep(sc.InstanceField)
	}
	entries := map[string]uint64{}
	if !w.rebuild {
		for k, v := range row.entries {
			entries[k] = v
		}
	}
	for _, r := range runs {
		if r.failed != nil || !r.moved {
			continue
		}
		c := r.after
		if sc := e.scal[r.srcIdx]; r.slot == slotField {
			it[sc.Field] = abi.N(strconv.FormatInt(int64(c)+sc.Offset, 10))
			if sc.InstanceField != "" {
				it[sc.InstanceField] = abi.S(r.id.streamID)
			}
			continue
		}
		entries[mapKey(r.id)] = c
	}
	if cp.Map == "" {
		return
	}
	if len(entries) == 0 {
		delete(it, cp.Map)
		return
	}
	m := make(abi.Item, len(entries))
	for k, v := range entries {
		m[k] = abi.N(strconv.FormatUint(v, 10))
	}
	it[cp.Map] = abi.M(m)
}
