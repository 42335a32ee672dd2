package ddblocal

import (
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// The legacy parameters: Expected, ConditionalOperator, AttributeUpdates,
// KeyConditions, QueryFilter, ScanFilter (and AttributesToGet, in
// params.go). They are validated here with DynamoDB's checks and words,
// then translated into the conditions and updates of the expression
// engine (expr.LegacyCondition, expr.LegacyUpdates).

// expectedAttr is an ExpectedAttributeValue.
type expectedAttr struct {
	AttributeValueList []wire.RequestValue // nil when absent
	ComparisonOperator string
	Exists             *bool
	Value              wire.RequestValue
}

// condition is a Condition of KeyConditions, QueryFilter or ScanFilter.
type condition struct {
	AttributeValueList []wire.RequestValue
	ComparisonOperator string
}

// attrUpdate is an AttributeValueUpdate.
type attrUpdate struct {
	Action string
	Value  wire.RequestValue
}

// legacyInput is the legacy parameters a request may carry.
type legacyInput struct {
	Expected            map[string]*expectedAttr
	ConditionalOperator string
	AttributeUpdates    map[string]*attrUpdate
	KeyConditions       map[string]*condition
	QueryFilter         map[string]*condition
	ScanFilter          map[string]*condition
}

// namedParam is a request parameter and whether the request set it.
type namedParam struct {
	name string
	set  bool
}

// checkExprMix is DynamoDB's first check of a request's parameters: no
// expression parameter beside a non-expression one (the legacy ones), and
// no ExpressionAttributeNames or ExpressionAttributeValues without an
// expression that can use them. exprs and legacy are in DynamoDB's order.
func checkExprMix(exprs, legacy []namedParam, namesSet, valuesSet bool) error {
	var used []string
	for _, e := range exprs {
		if e.set {
			used = append(used, e.name)
		}
	}
	if len(used) > 0 {
		keyCondExpr := false
		for _, e := range exprs {
			keyCondExpr = keyCondExpr || (e.name == "KeyConditionExpression" && e.set)
		}
		var old []string
		for _, l := range legacy {
			// KeyConditions beside other expressions is the key condition
			// they need; only beside KeyConditionExpression is it mixing.
			if l.set && (l.name != "KeyConditions" || keyCondExpr) {
				old = append(old, l.name)
			}
		}
		if len(old) > 0 {
			return apierr.Validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}",
				strings.Join(old, ", "), strings.Join(used, ", "))
		}
	}
	if namesSet && len(used) == 0 {
		return apierr.Validation("ExpressionAttributeNames can only be specified when using expressions")
	}
	var valueExprs []string
	anyValueExpr := false
	for _, e := range exprs {
		if e.name != "ProjectionExpression" {
			valueExprs = append(valueExprs, e.name)
			anyValueExpr = anyValueExpr || e.set
		}
	}
	if len(valueExprs) > 0 && valuesSet && !anyValueExpr {
		verb := " is null"
		if len(valueExprs) > 1 {
			verb = " are null"
		}
		return apierr.Validation("ExpressionAttributeValues can only be specified when using expressions: %s%s", strings.Join(valueExprs, " and "), verb)
	}
	return nil
}

// reqValue validates and normalizes one attribute value of a legacy
// parameter.
func reqValue(v wire.RequestValue) (abi.Value, error) {
	if v.Err != nil {
		return abi.Value{}, v.Err
	}
	return normValue(v.Value)
}

func reqValues(vs []wire.RequestValue) ([]abi.Value, error) {
	out := make([]abi.Value, len(vs))
	for i, v := range vs {
		x, err := reqValue(v)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func invalidParam(format string, args ...any) error {
	return apierr.Validation("One or more parameter values were invalid: "+format, args...)
}

// argCounts is how many values each ComparisonOperator takes: an exact
// count, or at least one (-1, for IN).
var argCounts = map[string]int{"EQ": 1, "NE": 1, "LE": 1, "LT": 1, "GE": 1, "GT": 1, "CONTAINS": 1, "NOT_CONTAINS": 1,
	"BEGINS_WITH": 1, "NOT_NULL": 0, "NULL": 0, "IN": -1, "BETWEEN": 2}

// argTypes is which value types each ComparisonOperator takes in a
// Condition.
var argTypes = map[string]string{"EQ": "S N B SS NS BS", "NE": "S N B SS NS BS", "LE": "S N B", "LT": "S N B", "GE": "S N B", "GT": "S N B",
	"CONTAINS": "S N B", "NOT_CONTAINS": "S N B", "BEGINS_WITH": "S B", "IN": "S N B", "BETWEEN": "S N B"}

func argCountOK(op string, n int) bool {
	want, ok := argCounts[op]
	return ok && (want == n || (want < 0 && n > 0))
}

// sameTypes checks the AttributeValueList members share one type, and a
// BETWEEN's bounds are in order.
func sameTypes(op string, vals []abi.Value) error {
	for _, v := range vals[1:] {
		if v.Kind != vals[0].Kind {
			return invalidParam("AttributeValues inside AttributeValueList must be of same type")
		}
	}
	return nil
}

func betweenOrder(op string, vals []abi.Value) error {
	if op == "BETWEEN" && len(vals) == 2 {
		if c, ok := expr.Compare(vals[0], vals[1]); ok && c > 0 {
			return apierr.Validation("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound")
		}
	}
	return nil
}

// expectedConds validates Expected as DynamoDB does and returns its
// conditions, attributes in name order.
func (l *legacyInput) expectedConds() ([]expr.LegacyCond, error) {
	var out []expr.LegacyCond
	for _, name := range sortedNames(l.Expected) {
		e := l.Expected[name]
		if e == nil {
			e = &expectedAttr{}
		}
		if e.AttributeValueList != nil && e.Value.Set() {
			return nil, invalidParam("Value and AttributeValueList cannot be used together for Attribute: %s", name)
		}
		var vals []abi.Value
		var err error
		switch {
		case e.ComparisonOperator != "":
			op := e.ComparisonOperator
			if e.Exists != nil {
				return nil, invalidParam("Exists and ComparisonOperator cannot be used together for Attribute: %s", name)
			}
			if op != "NULL" && op != "NOT_NULL" && e.AttributeValueList == nil && !e.Value.Set() {
				return nil, invalidParam("Value or AttributeValueList must be used with ComparisonOperator: %s for Attribute: %s", op, name)
			}
			raw := e.AttributeValueList
			if raw == nil && e.Value.Set() {
				raw = []wire.RequestValue{e.Value}
			}
			if !argCountOK(op, len(raw)) {
				return nil, invalidParam("Invalid number of argument(s) for the %s ComparisonOperator", op)
			}
			if vals, err = reqValues(raw); err != nil {
				return nil, err
			}
			if len(vals) > 0 {
				if err := sameTypes(op, vals); err != nil {
					return nil, err
				}
				if err := betweenOrder(op, vals); err != nil {
					return nil, err
				}
			}
			out = append(out, expr.LegacyCond{Attr: name, Op: op, Values: vals})
		case e.AttributeValueList != nil:
			return nil, invalidParam("AttributeValueList can only be used with a ComparisonOperator for Attribute: %s", name)
		default:
			exists := e.Exists == nil || *e.Exists
			if exists && !e.Value.Set() {
				what := "null"
				if e.Exists != nil {
					what = "true"
				}
				return nil, invalidParam("Value must be provided when Exists is %s for Attribute: %s", what, name)
			}
			if !exists && e.Value.Set() {
				return nil, invalidParam("Value cannot be used when Exists is false for Attribute: %s", name)
			}
			if !exists {
				out = append(out, expr.LegacyCond{Attr: name, Op: "NULL"})
				continue
			}
			v, err := reqValue(e.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, expr.LegacyCond{Attr: name, Op: "EQ", Values: []abi.Value{v}})
		}
	}
	return out, nil
}

// filterConds validates a QueryFilter, ScanFilter or KeyConditions as
// DynamoDB does and returns its conditions, attributes in name order.
func filterConds(m map[string]*condition) ([]expr.LegacyCond, error) {
	var out []expr.LegacyCond
	for _, name := range sortedNames(m) {
		c := m[name]
		if c == nil {
			c = &condition{}
		}
		op := c.ComparisonOperator
		vals, err := reqValues(c.AttributeValueList)
		if err != nil {
			return nil, err
		}
		if !argCountOK(op, len(vals)) {
			return nil, invalidParam("Invalid number of argument(s) for the %s ComparisonOperator", op)
		}
		if len(vals) > 0 {
			if err := sameTypes(op, vals); err != nil {
				return nil, err
			}
		}
		for _, v := range vals {
			if !strings.Contains(" "+argTypes[op]+" ", " "+v.Kind.String()+" ") {
				return nil, invalidParam("ComparisonOperator %s is not valid for %s AttributeValue type", op, v.Kind)
			}
		}
		if err := betweenOrder(op, vals); err != nil {
			return nil, err
		}
		out = append(out, expr.LegacyCond{Attr: name, Op: op, Values: vals})
	}
	return out, nil
}

// legacyFilter returns the condition of a QueryFilter or ScanFilter with
// the request's ConditionalOperator (nil without one).
func legacyFilter(m map[string]*condition, condOp string) (*expr.Condition, error) {
	conds, err := filterConds(m)
	if err != nil || len(conds) == 0 {
		return nil, err
	}
	return expr.LegacyCondition(conds, condOp == "OR"), nil
}

// legacyExpected returns the condition of Expected with the request's
// ConditionalOperator (nil without Expected).
func (l *legacyInput) legacyExpected() (*expr.Condition, error) {
	conds, err := l.expectedConds()
	if err != nil || len(conds) == 0 {
		return nil, err
	}
	return expr.LegacyCondition(conds, l.ConditionalOperator == "OR"), nil
}

// legacyUpdates validates AttributeUpdates as DynamoDB does and returns
// its update (nil without one).
func (l *legacyInput) legacyUpdates() (*expr.Update, error) {
	if l.AttributeUpdates == nil {
		return nil, nil
	}
	var ups []expr.LegacyUpdate
	for _, name := range sortedNames(l.AttributeUpdates) {
		u := l.AttributeUpdates[name]
		if u == nil {
			u = &attrUpdate{}
		}
		var v abi.Value
		if u.Value.Set() {
			var err error
			if v, err = reqValue(u.Value); err != nil {
				return nil, err
			}
		}
		switch {
		case !u.Value.Set() && u.Action != "DELETE":
			return nil, invalidParam("Only DELETE action is allowed when no attribute value is specified")
		case u.Value.Set() && u.Action == "DELETE" && !isSetKind(v.Kind):
			return nil, invalidParam("DELETE action with value is not supported for the type %s", v.Kind)
		case u.Value.Set() && u.Action == "ADD" && !isSetKind(v.Kind) && v.Kind != abi.KindN && v.Kind != abi.KindL:
			return nil, invalidParam("ADD action is not supported for the type %s", v.Kind)
		}
		ups = append(ups, expr.LegacyUpdate{Attr: name, Action: u.Action, Value: v, Set: u.Value.Set()})
	}
	return expr.LegacyUpdates(ups), nil
}

func isSetKind(k abi.Kind) bool { return k == abi.KindSS || k == abi.KindNS || k == abi.KindBS }

// checkLegacyUpdateKeys refuses AttributeUpdates of key attributes, and of
// index keys with a value of another type, as DynamoDB does once it knows
// the table.
func (l *legacyInput) checkLegacyUpdateKeys(t *table) error {
	for _, n := range t.key.names() {
		if _, ok := l.AttributeUpdates[n]; ok {
			return invalidParam("Cannot update attribute %s. This attribute is part of the key", n)
		}
	}
	for _, ix := range t.allIndexes() {
		for _, n := range schemaKey(ix.KeySchema).names() {
			u := l.AttributeUpdates[n]
			if u == nil || !u.Value.Set() || u.Value.Err != nil {
				continue
			}
			if got := u.Value.Value.Kind.String(); got != t.types[n] {
				return invalidParam("Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s", n, t.types[n], got, ix.IndexName)
			}
		}
	}
	return nil
}

// filterKeyAttr refuses a QueryFilter on a key attribute of the table or
// index queried.
func filterKeyAttr(m map[string]*condition, keyNames []string) error {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, k := range keyNames {
		for _, n := range names {
			if n == k {
				return apierr.Validation("QueryFilter can only contain non-primary key attributes: Primary key attribute: %s", k)
			}
		}
	}
	return nil
}
