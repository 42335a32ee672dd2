package apply

import (
	"context"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// write puts the folded row once, conditioned on what was read: the
// revision when the projection has one, else the checkpoint (SPEC P4, P7).
func (e *Engine) write(ctx context.Context, w *rowWork, row *rowState, runs []*run, f *folded) (abi.Item, error) {
	it := make(abi.Item, len(f.resp.Item)+len(w.key)+4)
	for k, v := range f.resp.Item {
		if !v.IsZero() {
			it[k] = v
		}
	}
	for k, v := range w.key {
		it[k] = v
	}
	cond := &store.Cond{Names: map[string]string{}, Values: map[string]abi.Value{}}
	if e.p.Checkpoint.Field != "" && len(runs) == 1 {
		cp := e.p.Checkpoint
		it[cp.Field] = abi.N(strconv.FormatInt(int64(f.checkpoint[runs[0].id])+cp.Offset, 10))
		if e.p.Revision == nil {
			guard(cond, cp.Field, row.item)
		}
	}
	if r := e.p.Revision; r != nil {
		it[r.Field] = abi.N(strconv.FormatInt(row.nextRevision(r), 10))
		guard(cond, r.Field, row.item)
	}
	if e.p.CreatedAt != "" {
		if v, ok := row.item[e.p.CreatedAt]; ok {
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
	}
	err := e.db.PutItem(ctx, store.Put{Table: e.p.Table, Item: it, Cond: cond})
	return it, err
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
