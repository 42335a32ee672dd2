package expr

import (
	"bytes"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// keyCond is one condition of a key condition: name op values.
type keyCond struct {
	name   string
	op     string
	values []abi.Value
}

// flipped maps a comparator to the one with its operands swapped.
var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// ParseKeyCondition parses a KeyConditionExpression. It accepts the
// condition grammar (DynamoDB parses key conditions with the condition
// parser) and then allows only: key = :v, key <,<=,>,>= :v (either side),
// key BETWEEN :a AND :b and begins_with(key, :v), at most one per key, ANDed.
// Call Validate with the key schema before reading the fields.
func ParseKeyCondition(src string, p *Params) (*KeyCondition, error) {
	kc, err := ParseKeyConditionSyntax(src, p)
	if err != nil {
		return nil, err
	}
	return kc, kc.Check()
}

// ParseKeyConditionSyntax parses a KeyConditionExpression with the
// condition grammar only. DynamoDB parses every expression of a Query
// before it checks the key condition's form: call Check after parsing
// the others (ParseKeyCondition does both at once).
func ParseKeyConditionSyntax(src string, p *Params) (*KeyCondition, error) {
	root, err := parseCondTree(src, p, kindKeyCondition)
	if err != nil {
		return nil, err
	}
	return &KeyCondition{root: root}, nil
}

// Check allows only the forms of a key condition: key = :v, key <, <=,
// >, >= :v (either side), key BETWEEN :a AND :b and begins_with(key, :v),
// at most one per key, ANDed.
func (kc *KeyCondition) Check() error {
	root := kc.root
	if op := invalidKeyOperator(root); op != "" {
		return apierr.Validation("Invalid operator used in KeyConditionExpression: %s", op)
	}
	var leaves []*cond
	flattenAnd(root, &leaves)
	seen := map[string]bool{}
	kc.conds = nil
	for _, l := range leaves {
		c, err := keyLeaf(l)
		if err != nil {
			return err
		}
		if seen[c.name] {
			return apierr.Validation("KeyConditionExpressions must only contain one condition per key")
		}
		seen[c.name] = true
		kc.conds = append(kc.conds, c)
	}
	if len(kc.conds) > 2 {
		return apierr.Validation("Conditions can be of length 1 or 2 only")
	}
	// A provisional assignment; Validate redoes it from the key schema.
	for i, c := range kc.conds {
		if c.op == "=" && kc.HashName == "" {
			kc.HashName, kc.HashValue = c.name, c.values[0]
			if len(kc.conds) == 2 {
				o := kc.conds[1-i]
				kc.Range = &RangeCond{Name: o.name, Op: o.op, Values: o.values}
			}
		}
	}
	return nil
}

// invalidKeyOperator returns the first operator (top-down) a key condition
// may not use, or "".
func invalidKeyOperator(c *cond) string {
	switch c.typ {
	case cOr:
		return "OR"
	case cNot:
		return "NOT"
	case cIn:
		return "IN"
	case cCmp:
		if c.op == "<>" {
			return "<>"
		}
	case cFunc:
		if c.fn.name != "begins_with" {
			return c.fn.name
		}
	}
	for _, k := range c.kids {
		if op := invalidKeyOperator(k); op != "" {
			return op
		}
	}
	return ""
}

func flattenAnd(c *cond, out *[]*cond) {
	switch c.typ {
	case cAnd, cParen:
		for _, k := range c.kids {
			flattenAnd(k, out)
		}
	default:
		*out = append(*out, c)
	}
}

// keyLeaf turns one comparison, BETWEEN or begins_with into a keyCond.
func keyLeaf(c *cond) (keyCond, error) {
	var args []*operand
	op := c.op
	switch c.typ {
	case cCmp:
		args = c.args
		if args[0].typ != opPath && args[1].typ == opPath {
			args = []*operand{args[1], args[0]}
			op = flipped[op]
		}
	case cBetween:
		args, op = c.args, "BETWEEN"
	case cFunc:
		args, op = c.fn.args, "begins_with"
	}
	if op == "BETWEEN" || op == "begins_with" {
		if args[0].typ != opPath {
			return keyCond{}, apierr.Validation("Invalid condition in KeyConditionExpression: %s operator must have the key attribute as its first operand", op)
		}
	}
	// operands in the order written, as DynamoDB checks them
	paths := 0
	for _, a := range args {
		switch a.typ {
		case opPath:
			if paths++; paths > 1 {
				return keyCond{}, apierr.Validation("Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition")
			}
			if len(a.path) > 1 {
				return keyCond{}, apierr.Validation("KeyConditionExpressions cannot have conditions on nested attributes")
			}
		case opFunc:
			return keyCond{}, apierr.Validation("KeyConditionExpressions cannot contain nested operations")
		}
	}
	if paths == 0 {
		return keyCond{}, apierr.Validation("Invalid condition in KeyConditionExpression: No key attribute specified")
	}
	kc := keyCond{name: args[0].path[0].Name, op: op}
	for _, a := range args[1:] {
		kc.values = append(kc.values, a.val)
	}
	return kc, nil
}

// Validate checks the key condition against the table's (or index's) key
// schema: the hash key with '=', the range key only, types matching.
// rangeName is "" when the table has no range key. Types maps key attribute
// names to "S","N","B". On success HashName, HashValue and Range are set.
func (k *KeyCondition) Validate(hashName, rangeName string, types map[string]string) error {
	var hash *keyCond
	var rng *keyCond
	for i := range k.conds {
		c := &k.conds[i]
		switch {
		case c.name == hashName:
			hash = c
		case rangeName != "" && c.name == rangeName:
			rng = c
		}
	}
	if hash == nil {
		return apierr.Validation("Query condition missed key schema element: %s", hashName)
	}
	for i := range k.conds {
		c := &k.conds[i]
		if c != hash && c != rng {
			if rangeName == "" {
				return apierr.Validation("Query key condition not supported")
			}
			return apierr.Validation("Query condition missed key schema element: %s", rangeName)
		}
	}
	if hash.op != "=" {
		return apierr.Validation("Query key condition not supported")
	}
	mismatch := func(name string, vals []abi.Value) bool {
		t, ok := types[name]
		if !ok {
			return false
		}
		for _, v := range vals {
			if v.Kind.String() != t {
				return true
			}
		}
		return false
	}
	if mismatch(hash.name, hash.values) || rng != nil && mismatch(rng.name, rng.values) {
		return apierr.Validation("One or more parameter values were invalid: Condition parameter type does not match schema type")
	}
	k.HashName, k.HashValue, k.Range = hash.name, hash.values[0], nil
	if rng != nil {
		k.Range = &RangeCond{Name: rng.name, Op: rng.op, Values: rng.values}
	}
	return nil
}

// Match reports whether v, a range key value, satisfies the range condition.
func (r *RangeCond) Match(v abi.Value) bool {
	if len(r.Values) == 0 {
		return false
	}
	switch r.Op {
	case "BETWEEN":
		if len(r.Values) != 2 {
			return false
		}
		c1, ok1 := Compare(v, r.Values[0])
		c2, ok2 := Compare(v, r.Values[1])
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	case "begins_with":
		p := r.Values[0]
		if v.Kind != p.Kind {
			return false
		}
		switch v.Kind {
		case abi.KindS:
			return strings.HasPrefix(v.Str, p.Str)
		case abi.KindB:
			return bytes.HasPrefix(v.Bytes, p.Bytes)
		}
		return false
	}
	return compareOp(r.Op, v, true, r.Values[0], true)
}

// legacyOps names the operators of a key condition as ComparisonOperators.
var legacyOps = map[string]string{"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "BETWEEN": "BETWEEN", "begins_with": "BEGINS_WITH"}

// AppendParts appends the key condition's conditions (after Check) to dst
// as ComparisonOperators: = is EQ, < LT, <= LE, > GT, >= GE, begins_with
// BEGINS_WITH, BETWEEN BETWEEN.
func (k *KeyCondition) AppendParts(dst []LegacyCond) []LegacyCond {
	for _, c := range k.conds {
		dst = append(dst, LegacyCond{Attr: c.name, Op: legacyOps[c.op], Values: c.values})
	}
	return dst
}
