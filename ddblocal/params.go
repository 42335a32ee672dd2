package ddblocal

import (
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

// params returns the request's expression parameters, checked as
// DynamoDB checks them before it parses any expression: placeholder keys,
// empty maps, then each value (numbers normalized). checkExprMix has
// checked that the request may carry them at all.
func (e exprInput) params() (*expr.Params, error) {
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

// checkAttrsToGet refuses an AttributesToGet naming an attribute twice.
func checkAttrsToGet(attrs []string) error {
	seen := make(map[string]bool, len(attrs))
	for _, a := range attrs {
		if seen[a] {
			return apierr.Validation("One or more parameter values were invalid: Duplicate value in attribute name: %s", a)
		}
		seen[a] = true
	}
	return nil
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

// parseProj parses an optional ProjectionExpression, or takes the
// AttributesToGet (checked by checkAttrsToGet).
func parseProj(src *string, attrs []string, p *expr.Params) (*projector, error) {
	if src != nil {
		pr, err := expr.ParseProjection(*src, p)
		if err != nil {
			return nil, err
		}
		return &projector{expr: pr}, nil
	}
	if attrs != nil {
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
