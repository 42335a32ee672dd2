package ddblocal

import (
	"encoding/json"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// exprInput is the expression parameters shared by most requests.
type exprInput struct {
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues wire.RequestValues
}

// legacyInput is the pre-expression parameters; ddblocal refuses them.
type legacyInput struct {
	Expected            json.RawMessage
	ConditionalOperator json.RawMessage
	AttributeUpdates    json.RawMessage
	KeyConditions       json.RawMessage
	QueryFilter         json.RawMessage
	ScanFilter          json.RawMessage
}

func (l legacyInput) check() error {
	var names []string
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"Expected", l.Expected}, {"ConditionalOperator", l.ConditionalOperator}, {"AttributeUpdates", l.AttributeUpdates}, {"KeyConditions", l.KeyConditions}, {"QueryFilter", l.QueryFilter}, {"ScanFilter", l.ScanFilter}} {
		if len(f.raw) > 0 && string(f.raw) != "null" {
			names = append(names, f.name)
		}
	}
	if len(names) > 0 {
		return apierr.Validation("ddblocal does not support the legacy parameters %s; use expressions", strings.Join(names, ", "))
	}
	return nil
}

// namedExpr is one expression parameter of a request that may use
// ExpressionAttributeValues, and whether the request set it.
type namedExpr struct {
	name string
	set  bool
}

// params returns the request's expression parameters. anyExpr tells
// whether the request has any expression at all; valueExprs lists, in
// DynamoDB's order, its expression parameters that can use values;
// envelope wraps the values error in "1 validation error detected: " as
// DynamoDB does for PutItem and UpdateItem.
func (e exprInput) params(anyExpr, envelope bool, valueExprs ...namedExpr) (*expr.Params, error) {
	if e.ExpressionAttributeNames != nil && !anyExpr {
		return nil, apierr.Validation("ExpressionAttributeNames can only be specified when using expressions")
	}
	if e.ExpressionAttributeValues.Set() {
		anyValueExpr := false
		var nulls []string
		for _, v := range valueExprs {
			anyValueExpr = anyValueExpr || v.set
			nulls = append(nulls, v.name+" is null")
		}
		switch {
		case len(valueExprs) > 0 && !anyValueExpr:
			msg := "ExpressionAttributeValues can only be specified when using expressions: " + strings.Join(nulls, " and ")
			if envelope {
				msg = "1 validation error detected: " + msg
			}
			return nil, apierr.Validation("%s", msg)
		case !anyExpr:
			return nil, apierr.Validation("ExpressionAttributeValues can only be specified when using expressions")
		}
	}
	p := expr.NewParams(e.ExpressionAttributeNames, e.ExpressionAttributeValues.Values)
	if err := p.Validate(e.ExpressionAttributeNames != nil, e.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	if err := e.ExpressionAttributeValues.Err; err != nil {
		return nil, err
	}
	vals, err := normValues(e.ExpressionAttributeValues.Values)
	if err != nil {
		return nil, err
	}
	return expr.NewParams(e.ExpressionAttributeNames, vals), nil
}

// topNames returns the attribute names an expression's paths start with
// (a lexical scan: expr.Condition does not expose its paths).
func topNames(src string, names map[string]string) []string {
	var out []string
	i := 0
	for i < len(src) {
		ch := src[i]
		if ch == '\'' || ch == '"' {
			i++
			continue
		}
		if !isWordByte(ch) && ch != '#' && ch != ':' {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && isWordByte(src[j]) {
			j++
		}
		tok := src[i:j]
		prev := byte(' ')
		for k := i - 1; k >= 0; k-- {
			if src[k] != ' ' && src[k] != '\t' && src[k] != '\n' {
				prev = src[k]
				break
			}
		}
		next := byte(' ')
		for k := j; k < len(src); k++ {
			if src[k] != ' ' && src[k] != '\t' && src[k] != '\n' {
				next = src[k]
				break
			}
		}
		i = j
		if prev == '.' || next == '(' || tok[0] == ':' || (tok[0] >= '0' && tok[0] <= '9') {
			continue
		}
		switch strings.ToUpper(tok) {
		case "AND", "OR", "NOT", "BETWEEN", "IN":
			continue
		}
		if tok[0] == '#' {
			tok = names[tok]
		}
		out = append(out, tok)
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func has(s *string) bool { return s != nil }

// parseCond parses an optional ConditionExpression.
func parseCond(src *string, p *expr.Params) (*expr.Condition, error) {
	if src == nil {
		return nil, nil
	}
	return expr.ParseCondition(*src, p)
}

// parseProj parses an optional ProjectionExpression or AttributesToGet.
func parseProj(src *string, attrs []string, p *expr.Params) (*projector, error) {
	if src != nil && attrs != nil {
		return nil, apierr.Validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}")
	}
	if src != nil {
		pr, err := expr.ParseProjection(*src, p)
		if err != nil {
			return nil, err
		}
		return &projector{expr: pr}, nil
	}
	if attrs != nil {
		if len(attrs) == 0 {
			return nil, apierr.Validation("1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1")
		}
		seen := map[string]bool{}
		for _, a := range attrs {
			if seen[a] {
				return nil, apierr.Validation("One or more parameter values were invalid: Duplicate value in attribute name: %s", a)
			}
			seen[a] = true
		}
		return &projector{attrs: attrs}, nil
	}
	return nil, nil
}

// projector applies a ProjectionExpression or AttributesToGet.
type projector struct {
	expr  *expr.Projection
	attrs []string
}

func (p *projector) apply(it abi.Item) abi.Item {
	if p == nil || it == nil {
		return it
	}
	if p.expr != nil {
		return p.expr.Apply(it)
	}
	out := abi.Item{}
	for _, a := range p.attrs {
		if v, ok := it[a]; ok {
			out[a] = v
		}
	}
	return out
}

func condFailed(old abi.Item, returnOld bool) error {
	e := &apierr.Error{Code: "ConditionalCheckFailedException", Message: "The conditional request failed", Status: 400}
	if returnOld && old != nil {
		e.Item = wire.Item(old)
	}
	return e
}

func checkRVOnFailure(v string) error {
	if v != "" && v != "NONE" && v != "ALL_OLD" {
		return apierr.Validation("1 validation error detected: Value '%s' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]", v)
	}
	return nil
}
