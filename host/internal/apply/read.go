package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// Rows reads rows by key, strongly consistent, 100 keys per BatchGetItem
// (unprocessed keys retried). The result is parallel to keys: nil where
// there is no row, a tombstone included.
func (e *Engine) Rows(ctx context.Context, keys []abi.Item) ([]abi.Item, error) {
	for i, k := range keys {
		if _, err := e.checkKey(k); err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
	}
	items, err := e.db.BatchGetItem(ctx, e.p.Table, keys)
	if err != nil {
		return nil, fmt.Errorf("reading rows of %s: %w", e.p.Table, err)
	}
	for i, it := range items {
		if IsTombstone(it) {
			items[i] = nil
		}
	}
	return items, nil
}

// Filter is a filter expression with its names and values.
type Filter struct {
	Expr   string
	Names  map[string]string
	Values map[string]abi.Value
}

// The placeholders RowFilter uses; a query's own must differ.
const (
	filterMarker  = "#edd_e"
	filterTomb    = ":edd_tombstone"
	filterOutbox  = ":edd_outbox"
	filterReserve = "edd_"
)

// RowFilter returns the filter expression that keeps only rows: items
// marked as the projection's tombstones (removal) or as its outbox items
// (an outbox in the row's partition) are left out. The zero Filter when
// the projection keeps neither in its table.
func (e *Engine) RowFilter() Filter {
	var markers []string
	if r := e.p.Removal; r != nil {
		markers = append(markers, r.EntityType+TombstoneSuffix)
	}
	if l, ok := e.p.OutboxLayout(); ok && l.InRow {
		markers = append(markers, l.Marker)
	}
	if len(markers) == 0 {
		return Filter{}
	}
	f := Filter{Names: map[string]string{filterMarker: MarkerAttr}, Values: map[string]abi.Value{}}
	ph := []string{filterTomb, filterOutbox}
	var in []string
	for i, m := range markers {
		f.Values[ph[i]] = abi.S(m)
		in = append(in, ph[i])
	}
	f.Expr = fmt.Sprintf("attribute_not_exists(%s) OR NOT (%s IN (%s))", filterMarker, filterMarker, strings.Join(in, ", "))
	return f
}

// RowQuery is a query of the read-model table (or one of its indexes).
type RowQuery struct {
	Index   string // "" : the table (strongly consistent); an index is read eventually consistent
	KeyCond string // the key condition expression (required)
	Filter  string // an optional filter expression of the caller's
	Names   map[string]string
	Values  map[string]abi.Value
	Limit   int  // stop after this many rows (0: every row)
	Reverse bool // descending sort key order
}

// QueryRows runs q and returns the rows it finds, page by page, leaving
// out the projection's tombstones and outbox items (RowFilter, and, for
// items written under another entity type, by their marker).
func (e *Engine) QueryRows(ctx context.Context, q RowQuery) ([]abi.Item, error) {
	if q.KeyCond == "" {
		return nil, fmt.Errorf("query of %s: no key condition; give the key condition expression, e.g. \"pk = :pk\"", e.p.Table)
	}
	for n := range q.Names {
		if strings.HasPrefix(n, "#"+filterReserve) {
			return nil, fmt.Errorf("query of %s: the expression name %q is reserved for the filter that leaves tombstones out; rename it", e.p.Table, n)
		}
	}
	for v := range q.Values {
		if strings.HasPrefix(v, ":"+filterReserve) {
			return nil, fmt.Errorf("query of %s: the expression value %q is reserved for the filter that leaves tombstones out; rename it", e.p.Table, v)
		}
	}
	rf := e.RowFilter()
	sq := store.Query{Table: e.p.Table, Index: q.Index, KeyCond: q.KeyCond, Filter: q.Filter,
		Names: map[string]string{}, Values: map[string]abi.Value{}, Backwards: q.Reverse}
	for _, m := range []map[string]string{q.Names, rf.Names} {
		for k, v := range m {
			sq.Names[k] = v
		}
	}
	for _, m := range []map[string]abi.Value{q.Values, rf.Values} {
		for k, v := range m {
			sq.Values[k] = v
		}
	}
	switch {
	case rf.Expr != "" && q.Filter != "":
		sq.Filter = "(" + q.Filter + ") AND (" + rf.Expr + ")"
	case rf.Expr != "":
		sq.Filter = rf.Expr
	}
	var rows []abi.Item
	for {
		page, err := e.db.Query(ctx, sq)
		if err != nil {
			return rows, fmt.Errorf("query of %s: %w", e.p.Table, err)
		}
		for _, it := range page.Items {
			if isEngineItem(it) {
				continue
			}
			rows = append(rows, it)
			if q.Limit > 0 && len(rows) == q.Limit {
				return rows, nil
			}
		}
		if page.LastKey == nil {
			return rows, nil
		}
		sq.StartKey = page.LastKey
	}
}

// isEngineItem reports whether a stored item is a tombstone or an outbox
// item rather than a row.
func isEngineItem(it abi.Item) bool {
	v, ok := it[MarkerAttr]
	return ok && v.Kind == abi.KindS && (strings.HasSuffix(v.Str, TombstoneSuffix) || strings.HasSuffix(v.Str, OutboxSuffix))
}
