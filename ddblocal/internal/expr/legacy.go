package expr

import "github.com/dynafold/dynafold/abi"

// The legacy parameters (Expected, QueryFilter, ScanFilter, KeyConditions,
// AttributeUpdates) say with a ComparisonOperator or an Action what an
// expression says with its grammar. They are translated here into the
// Condition and Update the expression with the same meaning parses to, so
// that both are evaluated by the same code.

// LegacyCond is one condition of a legacy parameter: an attribute (a top-
// level name, never a path), a ComparisonOperator and its
// AttributeValueList, validated by the caller.
type LegacyCond struct {
	Attr   string
	Op     string // EQ, NE, LE, LT, GE, GT, NOT_NULL, NULL, CONTAINS, NOT_CONTAINS, BEGINS_WITH, IN, BETWEEN
	Values []abi.Value
}

// LegacyCondition returns the condition that holds when every one of
// conds holds (or, with or, when any does): the Condition of "attr = :v",
// "attr <> :v", "attr < :v", ..., "attribute_exists(attr)",
// "attribute_not_exists(attr)", "contains(attr, :v)",
// "NOT contains(attr, :v)", "begins_with(attr, :v)", "attr IN (...)" and
// "attr BETWEEN :a AND :b", whose meanings are those of the
// ComparisonOperators. It returns nil for no conditions.
func LegacyCondition(conds []LegacyCond, or bool) *Condition {
	var root *cond
	for _, c := range conds {
		n := legacyNode(c)
		if root == nil {
			root = n
			continue
		}
		typ := cAnd
		if or {
			typ = cOr
		}
		root = &cond{typ: typ, kids: []*cond{root, n}}
	}
	if root == nil {
		return nil
	}
	return &Condition{root: root}
}

func legacyNode(c LegacyCond) *cond {
	path := &operand{typ: opPath, path: Path{{Name: c.Attr}}}
	vals := make([]*operand, len(c.Values))
	for i, v := range c.Values {
		vals[i] = &operand{typ: opValue, val: v}
	}
	fn := func(name string, args ...*operand) *cond {
		return &cond{typ: cFunc, fn: &operand{typ: opFunc, name: name, args: args}}
	}
	switch c.Op {
	case "EQ", "NE", "LT", "LE", "GT", "GE":
		op := map[string]string{"EQ": "=", "NE": "<>", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}[c.Op]
		return &cond{typ: cCmp, op: op, args: []*operand{path, vals[0]}}
	case "NOT_NULL":
		return fn("attribute_exists", path)
	case "NULL":
		return fn("attribute_not_exists", path)
	case "CONTAINS":
		return fn("contains", path, vals[0])
	case "NOT_CONTAINS":
		return &cond{typ: cNot, kids: []*cond{fn("contains", path, vals[0])}}
	case "BEGINS_WITH":
		return fn("begins_with", path, vals[0])
	case "IN":
		return &cond{typ: cIn, args: append([]*operand{path}, vals...)}
	case "BETWEEN":
		return &cond{typ: cBetween, args: []*operand{path, vals[0], vals[1]}}
	}
	return &cond{typ: cFunc, fn: &operand{typ: opFunc, name: "false"}}
}

// LegacyUpdate is one AttributeUpdates entry: an attribute, its Action
// (PUT, ADD or DELETE; "" is PUT) and its Value (Set false when absent),
// validated by the caller.
type LegacyUpdate struct {
	Attr   string
	Action string
	Value  abi.Value
	Set    bool
}

// msgLegacyType is DynamoDB's message when an AttributeUpdates ADD or
// DELETE meets an attribute of another type.
const msgLegacyType = "Type mismatch for attribute to update"

// LegacyUpdates returns the update of AttributeUpdates: PUT is
// "SET attr = :v", DELETE without a value "REMOVE attr", DELETE of a set
// "DELETE attr :v", ADD of a number or set "ADD attr :v", and ADD of a
// list (which expressions write with list_append) appends to the list.
// Type mismatches answer the legacy parameter's message.
func LegacyUpdates(ups []LegacyUpdate) *Update {
	u := &Update{}
	for _, l := range ups {
		a := &action{path: Path{{Name: l.Attr}}, legacy: true}
		val := &operand{typ: opValue, val: l.Value}
		switch {
		case l.Action == "ADD":
			a.typ, a.arg = aAdd, val
		case l.Action == "DELETE" && !l.Set:
			a.typ = aRemove
		case l.Action == "DELETE":
			a.typ, a.arg = aDelete, val
		default:
			a.typ, a.val = aSet, &setVal{a: val}
		}
		u.actions = append(u.actions, a)
	}
	return u
}

// legacyAdd is AttributeUpdates' ADD: numbers add, sets unite, lists
// append; an absent attribute becomes the value.
func legacyAdd(item abi.Item, path Path, x abi.Value) error {
	cur, ok := lookup(item, path)
	switch {
	case !ok:
		return setAt(item, path, x.Clone())
	case cur.Kind != x.Kind:
		return validation(msgLegacyType)
	case x.Kind == abi.KindL:
		l := append(append([]abi.Value(nil), cur.List...), x.Clone().List...)
		return setAt(item, path, abi.L(l...))
	}
	return addAt(item, path, x)
}

// legacyDelete is AttributeUpdates' DELETE of a value: the members of x
// leave the set.
func legacyDelete(item abi.Item, path Path, x abi.Value) error {
	if cur, ok := lookup(item, path); ok && cur.Kind != x.Kind {
		return validation(msgLegacyType)
	}
	return deleteAt(item, path, x, true)
}
