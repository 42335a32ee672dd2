// Package store is the projection engine's view of DynamoDB: the handful of
// operations the event store, the engine and the outbox need, in terms of
// abi values. The engine depends on this interface only; package
// host/store/dynamo implements it with aws-sdk-go-v2.
package store

import (
	"context"
	"errors"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// DB is a DynamoDB table client. Implementations are safe for concurrent use.
// Every read here is strongly consistent.
type DB interface {
	// GetItem reads one item; nil when absent.
	GetItem(ctx context.Context, table string, key abi.Item) (abi.Item, error)
	// BatchGetItem reads many items of one table, 100 keys per request,
	// retrying unprocessed keys. The result is in the order of keys, nil
	// where an item is absent.
	BatchGetItem(ctx context.Context, table string, keys []abi.Item) ([]abi.Item, error)
	// PutItem writes an item, under an optional condition.
	PutItem(ctx context.Context, p Put) error
	// UpdateItem applies an update expression and returns the item after it
	// (ALL_NEW).
	UpdateItem(ctx context.Context, u Update) (abi.Item, error)
	// DeleteItem deletes an item, under an optional condition.
	DeleteItem(ctx context.Context, d Delete) error
	// TransactWriteItems writes up to 100 items all or nothing.
	TransactWriteItems(ctx context.Context, writes []Write) error
	// Query reads one page of a query.
	Query(ctx context.Context, q Query) (Page, error)
}

// Cond is a condition expression with its names and values.
type Cond struct {
	Expr   string
	Names  map[string]string
	Values map[string]abi.Value
}

// Put writes Item into Table when Cond (if set) holds.
type Put struct {
	Table string
	Item  abi.Item
	Cond  *Cond
}

// Update applies Expr (an update expression) to the item at Key.
type Update struct {
	Table  string
	Key    abi.Item
	Expr   string
	Names  map[string]string
	Values map[string]abi.Value
	Cond   *Cond // condition expression; its Names and Values merge with the above
}

// Delete removes the item at Key when Cond (if set) holds.
type Delete struct {
	Table string
	Key   abi.Item
	Cond  *Cond
}

// Check is a transaction's condition check on the item at Key.
type Check struct {
	Table string
	Key   abi.Item
	Cond  Cond
}

// Write is one item of a transaction: exactly one field is set.
type Write struct {
	Put    *Put
	Update *Update
	Delete *Delete
	Check  *Check
}

// Query is one page request of a Query.
type Query struct {
	Table     string
	Index     string // empty: the table; an index is read eventually consistent
	KeyCond   string
	Filter    string
	Names     map[string]string
	Values    map[string]abi.Value
	StartKey  abi.Item
	Limit     int32 // 0: no limit
	Backwards bool  // ScanIndexForward = false
}

// Scan reads a whole table page by page (not part of DB: the engine never
// scans; operator commands such as a rebuild by plugin version do).
// KeyCond is unused; Index, Limit and Backwards likewise.
type Scan struct {
	Table      string
	Filter     string
	Projection string
	Names      map[string]string
	Values     map[string]abi.Value
	StartKey   abi.Item
	// Segment and TotalSegments make the scan one segment of a parallel
	// scan (TotalSegments 0: the whole table).
	Segment, TotalSegments int
	// Consistent reads strongly consistent (default: eventually).
	Consistent bool
}

// Page is one page of a Query's result. LastKey is nil on the last page.
type Page struct {
	Items   []abi.Item
	LastKey abi.Item
}

// ErrNoTable is matched (errors.Is) by a request on a table that does not
// exist (ResourceNotFoundException).
var ErrNoTable = errors.New("no such table")

// NoTableError is the error of a request on a table that does not exist:
// it matches ErrNoTable and names the table ("" when the request named
// several, as a transaction does).
type NoTableError struct{ Table string }

// Error implements error.
func (e *NoTableError) Error() string { return ErrNoTable.Error() }

// Is matches ErrNoTable.
func (e *NoTableError) Is(target error) bool { return target == ErrNoTable }

// ErrConditionFailed is matched (errors.Is) by a failed condition of a
// PutItem, UpdateItem, DeleteItem, and by a transaction cancelled because one
// of its conditions failed.
var ErrConditionFailed = errors.New("conditional check failed")

// ErrConflict is matched by a transaction cancelled because another request
// wrote one of its items concurrently (TransactionConflict).
var ErrConflict = errors.New("transaction conflict")

// ErrThrottled is matched by a request DynamoDB throttled, after the client's
// own retries.
var ErrThrottled = errors.New("throttled")

// TxCanceledError is a cancelled transaction with one reason code per item,
// in order ("None", "ConditionalCheckFailed", "TransactionConflict", ...).
type TxCanceledError struct {
	Reasons []string
}

// Error implements error.
func (e *TxCanceledError) Error() string {
	return "transaction cancelled: [" + strings.Join(e.Reasons, ", ") + "]"
}

// Is matches ErrConditionFailed and ErrConflict by the reasons.
func (e *TxCanceledError) Is(target error) bool {
	var code string
	switch target {
	case ErrConditionFailed:
		code = "ConditionalCheckFailed"
	case ErrConflict:
		code = "TransactionConflict"
	default:
		return false
	}
	for _, r := range e.Reasons {
		if r == code {
			return true
		}
	}
	return false
}
