// Package expr parses and evaluates DynamoDB expressions (condition, filter,
// key condition, update and projection expressions) and implements
// DynamoDB's number rules, for ddblocal, the project's DynamoDB-compatible
// server. Every error it returns is an *apierr.Error ValidationException
// carrying DynamoDB's own message text; parse errors name the expression
// parameter they came from ("Invalid FilterExpression: ..."), which is why
// ParseCondition and ParseFilter are separate.
//
// A request is handled in this order:
//
//	p := NewParams(names, values)
//	p.Validate(namesSet, valuesSet)  // placeholder keys, empty maps
//	p.ValidateValues()               // each :value (sets, numbers, nesting)
//	ParseKeyCondition / ParseFilter / ParseCondition / ParseUpdate / ParseProjection
//	p.CheckUnused()                  // after every expression of the request
//	kc.Validate(hash, range, types)  // before reading kc's fields
//
// Parsed expressions are immutable and safe for concurrent use. Update.Apply
// reports DynamoDB's run-time errors (a missing attribute on the right of
// SET, wrong operand types, an invalid document path); the caller then
// checks CheckNesting and ItemSize on the result.
package expr

import (
	"errors"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Params holds a request's ExpressionAttributeNames / ExpressionAttributeValues
// and records which were used. One Params is shared by all the expressions of
// one request, so that CheckUnused sees every use.
type Params struct {
	names      map[string]string
	values     map[string]abi.Value
	usedNames  map[string]bool
	usedValues map[string]bool
}

// NewParams returns Params for a request's ExpressionAttributeNames and
// ExpressionAttributeValues (either may be nil).
func NewParams(names map[string]string, values map[string]abi.Value) *Params {
	return &Params{names: names, values: values} // the used maps are made at the first use
}

func (p *Params) name(n string) (string, bool) {
	v, ok := p.names[n]
	if ok {
		if p.usedNames == nil {
			p.usedNames = make(map[string]bool, len(p.names))
		}
		p.usedNames[n] = true
	}
	return v, ok
}

func (p *Params) value(n string) (abi.Value, bool) {
	v, ok := p.values[n]
	if ok {
		if p.usedValues == nil {
			p.usedValues = make(map[string]bool, len(p.values))
		}
		p.usedValues[n] = true
	}
	return v, ok
}

// Validate checks the maps themselves the way DynamoDB does before parsing
// any expression: keys must be "#name" / ":value" placeholders, and a map
// that is present must not be empty. namesSet / valuesSet tell whether the
// request carried the parameter at all (an empty map differs from none).
func (p *Params) Validate(namesSet, valuesSet bool) error {
	if namesSet && len(p.names) == 0 {
		return apierr.Validation("ExpressionAttributeNames must not be empty")
	}
	for _, k := range sortedKeys(p.names) {
		if !validPlaceholder(k, '#') {
			return apierr.Validation("ExpressionAttributeNames contains invalid key: Syntax error; key: \"%s\"", k)
		}
	}
	if valuesSet && len(p.values) == 0 {
		return apierr.Validation("ExpressionAttributeValues must not be empty")
	}
	for _, k := range sortedKeys(p.values) {
		if !validPlaceholder(k, ':') {
			return apierr.Validation("ExpressionAttributeValues contains invalid key: Syntax error; key: \"%s\"", k)
		}
	}
	return nil
}

// ValidateValues checks every ExpressionAttributeValues entry with
// ValidateValue, answering DynamoDB's wrapped message:
// "ExpressionAttributeValues contains invalid value: <reason> for key :v".
func (p *Params) ValidateValues() error {
	for _, k := range sortedKeys(p.values) {
		if err := ValidateValue(p.values[k]); err != nil {
			var ae *apierr.Error
			if errors.As(err, &ae) {
				return apierr.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", ae.Message, k)
			}
			return err
		}
	}
	return nil
}

func validPlaceholder(k string, prefix byte) bool {
	if len(k) < 2 || k[0] != prefix {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !isWord(k[i]) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckUnused returns DynamoDB's ValidationException when a name or value was
// supplied but used by no expression of the request. Call it after parsing
// every expression of the request with this Params.
func (p *Params) CheckUnused() error {
	var unused []string
	for _, k := range sortedKeys(p.names) {
		if !p.usedNames[k] {
			unused = append(unused, k)
		}
	}
	if len(unused) > 0 {
		return apierr.Validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", strings.Join(unused, ", "))
	}
	for _, k := range sortedKeys(p.values) {
		if !p.usedValues[k] {
			unused = append(unused, k)
		}
	}
	if len(unused) > 0 {
		return apierr.Validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", strings.Join(unused, ", "))
	}
	return nil
}

// PathElem is one step of a document path: a map key (Name) or a list index.
type PathElem struct {
	Name    string
	Index   int
	IsIndex bool
}

// Path is a document path, its names already resolved from placeholders.
type Path []PathElem

// RangeCond is the sort-key part of a key condition.
type RangeCond struct {
	Name   string
	Op     string // "=","<","<=",">",">=","BETWEEN","begins_with"
	Values []abi.Value
}

// KeyCondition is a parsed KeyConditionExpression. ParseKeyCondition fills
// it with a guess (the first "=" condition as the hash key); Validate sets
// HashName, HashValue and Range from the key schema, so read them after
// Validate.
type KeyCondition struct {
	HashName  string
	HashValue abi.Value
	Range     *RangeCond // nil when absent

	conds []keyCond
	root  *cond // as parsed, until Check
}
