// Package expr parses and evaluates DynamoDB expressions (condition, filter,
// key condition, update and projection expressions) and implements
// DynamoDB's number rules, for ddblocal, the project's DynamoDB-compatible
// server. Every error it returns is an *apierr.Error ValidationException
// carrying DynamoDB's own message text.
package expr

import (
	"github.com/dynafold/dynafold/abi"
)

// Params holds a request's ExpressionAttributeNames / ExpressionAttributeValues
// and records which were used.
type Params struct {
	names      map[string]string
	values     map[string]abi.Value
	usedNames  map[string]bool
	usedValues map[string]bool
}

// NewParams returns Params for a request's ExpressionAttributeNames and
// ExpressionAttributeValues (either may be nil).
func NewParams(names map[string]string, values map[string]abi.Value) *Params {
	return &Params{names: names, values: values, usedNames: map[string]bool{}, usedValues: map[string]bool{}}
}

// CheckUnused returns DynamoDB's ValidationException when a name or value was
// supplied but used by no expression of the request.
func (p *Params) CheckUnused() error { panic("todo") }

// PathElem is one step of a document path: a map key (Name) or a list index.
type PathElem struct {
	Name    string
	Index   int
	IsIndex bool
}

// Path is a document path.
type Path []PathElem

// String returns the path in DynamoDB's notation (a.b[2].c).
func (p Path) String() string { panic("todo") }

// Condition is a parsed ConditionExpression or FilterExpression.
type Condition struct{}

// ParseCondition parses a ConditionExpression.
func ParseCondition(src string, p *Params) (*Condition, error) { panic("todo") }

// ParseFilter parses a FilterExpression (errors name FilterExpression).
func ParseFilter(src string, p *Params) (*Condition, error) { panic("todo") }

// Eval evaluates the condition against item, which may be nil (absent item).
func (c *Condition) Eval(item abi.Item) (bool, error) { panic("todo") }

// RangeCond is the sort-key part of a key condition.
type RangeCond struct {
	Name   string
	Op     string // "=","<","<=",">",">=","BETWEEN","begins_with"
	Values []abi.Value
}

// Match reports whether v satisfies the range condition.
func (r *RangeCond) Match(v abi.Value) bool { panic("todo") }

// KeyCondition is a parsed KeyConditionExpression.
type KeyCondition struct {
	HashName  string
	HashValue abi.Value
	Range     *RangeCond // nil when absent
}

// ParseKeyCondition parses a KeyConditionExpression.
func ParseKeyCondition(src string, p *Params) (*KeyCondition, error) { panic("todo") }

// Validate checks the key condition against the table's (or index's) key
// schema: the hash key with '=', the range key only, types matching.
// rangeName is "" when the table has no range key. Types maps key attribute
// names to "S","N","B".
func (k *KeyCondition) Validate(hashName, rangeName string, types map[string]string) error {
	panic("todo")
}

// Update is a parsed UpdateExpression.
type Update struct{}

// ParseUpdate parses an UpdateExpression.
func ParseUpdate(src string, p *Params) (*Update, error) { panic("todo") }

// Apply returns the item after the update (the input is not modified; item
// may be nil for a new item).
func (u *Update) Apply(item abi.Item) (abi.Item, error) { panic("todo") }

// Paths returns the document paths the update sets or removes (for
// key-attribute checks and UPDATED_OLD / UPDATED_NEW).
func (u *Update) Paths() []Path { panic("todo") }

// Projection is a parsed ProjectionExpression.
type Projection struct{}

// ParseProjection parses a ProjectionExpression.
func ParseProjection(src string, p *Params) (*Projection, error) { panic("todo") }

// Apply returns the projection of item.
func (p *Projection) Apply(item abi.Item) abi.Item { panic("todo") }

// Select returns the parts of item at paths (for UPDATED_OLD / UPDATED_NEW),
// with DynamoDB's nesting.
func Select(item abi.Item, paths []Path) abi.Item { panic("todo") }

// Compare orders two scalar values of one kind (N numerically, S by UTF-8
// bytes, B by bytes); ok is false when they are not comparable.
func Compare(a, b abi.Value) (c int, ok bool) { panic("todo") }

// NormalizeNumber validates DynamoDB number text and returns it the way
// DynamoDB returns it.
func NormalizeNumber(s string) (string, error) { panic("todo") }

// AddNumbers computes a+b exactly, with DynamoDB's overflow / precision errors.
func AddNumbers(a, b string) (string, error) { panic("todo") }

// SubNumbers computes a-b exactly, with DynamoDB's overflow / precision errors.
func SubNumbers(a, b string) (string, error) { panic("todo") }

// ItemSize is the item's size by DynamoDB's rules (attribute names + values).
func ItemSize(item abi.Item) int { panic("todo") }

// ValidateValue checks a value from a request: no empty sets, no duplicate
// set members, numbers valid; returns a ValidationException.
func ValidateValue(v abi.Value) error { panic("todo") }
