package host

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// ErrRowExists is matched by CreateRow's error where a row (not a
// tombstone) exists already.
var ErrRowExists = apply.ErrRowExists

// ErrProjectionAttribute is matched by CreateRow's error for an item that
// sets an attribute the projection keeps itself (a checkpoint or the
// revision) or is marked as a tombstone.
var ErrProjectionAttribute = apply.ErrProjectionAttribute

// Rows reads a projection's rows by key, strongly consistent, 100 keys per
// BatchGetItem (keys DynamoDB leaves unprocessed are read again). The
// result is parallel to keys, nil where there is no row: a removed row (a
// tombstone) is absent, as with Row.
func (h *Host) Rows(ctx context.Context, projection string, keys []abi.Item) ([]abi.Item, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	return e.Rows(ctx, keys)
}

// RowQuery is a query of a projection's read-model table, or of one of its
// indexes, in DynamoDB expression syntax.
type RowQuery struct {
	// Index names the index to query; "" queries the table itself,
	// strongly consistent (an index is read eventually consistent).
	Index string
	// KeyCondition is the key condition expression, e.g. "pk = :pk"
	// (required).
	KeyCondition string
	// Filter is an optional filter expression of the caller's; the rows
	// must also pass RowFilter.
	Filter string
	// Names and Values are the expression attribute names and values of
	// KeyCondition and Filter; names starting with "#edd_" and values
	// starting with ":edd_" are reserved.
	Names  map[string]string
	Values map[string]abi.Value
	// Limit stops the query after this many rows (0: every row).
	Limit int
	// Reverse returns the rows in descending sort key order.
	Reverse bool
}

// QueryRows queries a projection's read-model table and returns the rows
// found, every page of them (up to q.Limit): the projection's tombstones
// and outbox items are left out by a filter expression (RowFilter).
func (h *Host) QueryRows(ctx context.Context, projection string, q RowQuery) ([]abi.Item, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	return e.QueryRows(ctx, apply.RowQuery{Index: q.Index, KeyCond: q.KeyCondition, Filter: q.Filter, Names: q.Names, Values: q.Values, Limit: q.Limit, Reverse: q.Reverse})
}

// RowFilter is a filter expression with its attribute names and values,
// ready to be added to a Query or Scan of a read-model table from other
// code.
type RowFilter struct {
	Expression string
	Names      map[string]string
	Values     map[string]abi.Value
}

// RowFilter returns the filter expression that keeps only a projection's
// rows, leaving out its tombstones and the outbox items it keeps in the
// rows' partitions: attribute_not_exists(#edd_e) OR NOT (#edd_e IN
// (:edd_tombstone, :edd_outbox)), with #edd_e = __edd_e__ and the values
// "<readModel.entityType>#tombstone" and "<readModel.entityType>#outbox".
// AND it with a query's own filter. The zero RowFilter when the projection
// keeps neither in its table.
func (h *Host) RowFilter(projection string) (RowFilter, error) {
	e, err := h.engine(projection)
	if err != nil {
		return RowFilter{}, err
	}
	f := e.RowFilter()
	return RowFilter{Expression: f.Expr, Names: f.Names, Values: f.Values}, nil
}

// CreateRow writes item as a new row of a projection's table from code
// other than the projection, the way the projection treats tombstones:
// where no item is, it is written conditioned on there still being none
// (with revision.initial, when the projection has a revision); where a
// removed row's tombstone is, it is written over it with the tombstone's
// checkpoints and the revision one higher, conditioned on the tombstone as
// read, so a late redelivery of an event the removed row had folded is
// still recognised as applied and cannot undo the created row; where a
// row exists, nothing is written (ErrRowExists). item must hold the key
// and must not set the checkpoints or the revision (ErrProjectionAttribute).
// A lost race is read again and retried under the projection's retry
// policy. It returns the item written.
func (h *Host) CreateRow(ctx context.Context, projection string, item abi.Item) (abi.Item, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	return e.CreateRow(ctx, item)
}
