package expr

import (
	"github.com/dynafold/dynafold/abi"
)

// condType is the kind of a condition node.
type condType int

const (
	cOr condType = iota
	cAnd
	cNot
	cParen
	cCmp     // args[0] op args[1]
	cBetween // args[0] BETWEEN args[1] AND args[2]
	cIn      // args[0] IN (args[1:])
	cFunc    // a boolean function: fn
)

// cond is a node of a condition expression.
type cond struct {
	typ  condType
	op   string // comparator of cCmp
	kids []*cond
	args []*operand
	fn   *operand
}

// Condition is a parsed ConditionExpression or FilterExpression.
type Condition struct {
	root *cond
}

// Function arities, for conditions and updates.
var (
	condFuncs   = map[string]int{"attribute_exists": 1, "attribute_not_exists": 1, "attribute_type": 2, "begins_with": 2, "contains": 2, "size": 1}
	updateFuncs = map[string]int{"if_not_exists": 2, "list_append": 2}
)

// maxInOperands is DynamoDB's limit on the operands of IN.
const maxInOperands = 100

// condErrorOrder is the order in which DynamoDB reports a condition's errors.
var condErrorOrder = []string{catParens, catUnknownFn, catMisused, catReserved, catCondition, catName, catCount, catDistinct, catFunction, catLimit}

// ParseCondition parses a ConditionExpression.
func ParseCondition(src string, p *Params) (*Condition, error) {
	return parseCondition(src, p, kindCondition)
}

// ParseFilter parses a FilterExpression (its errors name FilterExpression).
func ParseFilter(src string, p *Params) (*Condition, error) {
	return parseCondition(src, p, kindFilter)
}

func parseCondition(src string, params *Params, k kind) (*Condition, error) {
	root, err := parseCondTree(src, params, k)
	if err != nil {
		return nil, err
	}
	return &Condition{root: root}, nil
}

// parseCondTree parses and checks a condition-grammar text (also used for
// key conditions).
func parseCondTree(src string, params *Params, k kind) (*cond, error) {
	if err := precheck(src, k); err != nil {
		return nil, err
	}
	p := newParser(src, k, "AND", "OR", "NOT", "BETWEEN", "IN")
	if p.peek().kind == tEOF {
		return nil, emptyError(k)
	}
	root, ok := p.parseOr()
	if err := p.finish(ok); err != nil {
		return nil, err
	}
	r := newResolver(params, catName, catName)
	checkCond(root, r)
	if err := r.errs.first(k, condErrorOrder...); err != nil {
		return nil, err
	}
	return root, nil
}

func (p *parser) parseOr() (*cond, bool) {
	l, ok := p.parseAnd()
	if !ok {
		return nil, false
	}
	for p.isKeyword(p.peek(), "OR") {
		p.pos++
		r, ok := p.parseAnd()
		if !ok {
			return nil, false
		}
		l = &cond{typ: cOr, kids: []*cond{l, r}}
	}
	return l, true
}

func (p *parser) parseAnd() (*cond, bool) {
	l, ok := p.parseNot()
	if !ok {
		return nil, false
	}
	for p.isKeyword(p.peek(), "AND") {
		p.pos++
		r, ok := p.parseNot()
		if !ok {
			return nil, false
		}
		l = &cond{typ: cAnd, kids: []*cond{l, r}}
	}
	return l, true
}

func (p *parser) parseNot() (*cond, bool) {
	if p.isKeyword(p.peek(), "NOT") {
		p.pos++
		c, ok := p.parseNot()
		if !ok {
			return nil, false
		}
		return &cond{typ: cNot, kids: []*cond{c}}, true
	}
	return p.parsePrimary()
}

// parsePrimary parses a comparison or function (whose operands may be
// in parentheses: "(size(a)) = :v") or, failing that, a parenthesised
// condition, in the order DynamoDB's grammar tries them.
func (p *parser) parsePrimary() (*cond, bool) {
	save := p.pos
	if t := p.peek(); t.kind == tPunct && t.text == "(" {
		if c, ok := p.parsePredicate(); ok {
			return c, true
		}
		p.pos = save + 1
		c, ok := p.parseOr()
		if ok && p.punct(")") {
			return &cond{typ: cParen, kids: []*cond{c}}, true
		}
		p.pos = save
		return nil, false
	}
	return p.parsePredicate()
}

func isComparator(t token) bool {
	if t.kind != tPunct {
		return false
	}
	switch t.text {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func (p *parser) parsePredicate() (*cond, bool) {
	save := p.pos
	left, ok := p.parseOperand()
	if !ok {
		return nil, false
	}
	t := p.peek()
	switch {
	case isComparator(t):
		p.pos++
		right, ok := p.parseOperand()
		if !ok {
			p.pos = save
			return nil, false
		}
		return &cond{typ: cCmp, op: t.text, args: []*operand{left, right}}, true
	case p.isKeyword(t, "BETWEEN"):
		p.pos++
		lo, ok := p.parseOperand()
		if !ok || !p.keyword("AND") {
			p.pos = save
			return nil, false
		}
		hi, ok := p.parseOperand()
		if !ok {
			p.pos = save
			return nil, false
		}
		return &cond{typ: cBetween, args: []*operand{left, lo, hi}}, true
	case p.isKeyword(t, "IN"):
		p.pos++
		if !p.punct("(") {
			p.pos = save
			return nil, false
		}
		list, ok := p.operandList()
		if !ok || !p.punct(")") {
			p.pos = save
			return nil, false
		}
		return &cond{typ: cIn, args: append([]*operand{left}, list...)}, true
	case left.typ == opFunc && left.parens == 0:
		return &cond{typ: cFunc, fn: left}, true
	}
	p.fail()
	p.pos = save
	return nil, false
}

// checkCond resolves and checks a condition tree.
func checkCond(c *cond, r *resolver) {
	switch c.typ {
	case cOr, cAnd, cNot:
		for _, k := range c.kids {
			checkCond(k, r)
		}
	case cParen:
		if c.kids[0].typ == cParen {
			r.errs.add(catParens, "The expression has redundant parentheses;")
		}
		checkCond(c.kids[0], r)
	case cFunc:
		if c.fn.name == "size" {
			r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: size")
		}
		checkOperands(r, c.fn)
		r.settleCondition()
	case cCmp, cBetween, cIn:
		for _, a := range c.args {
			if a.typ == opFunc && a.name != "size" {
				r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: %s", a.name)
			}
		}
		checkOperands(r, c.args...)
		switch c.typ {
		case cCmp:
			if c.op != "=" && c.op != "<>" {
				checkOrderedTypes(r, c.op, c.args)
			}
			checkDistinct(r, c.op, c.args)
		case cBetween:
			checkOrderedTypes(r, "BETWEEN", c.args)
			checkBetween(r, c.args[1], c.args[2])
		case cIn:
			if len(c.args)-1 > maxInOperands {
				r.errs.add(catLimit, "The IN operator is provided with too many operands; number of operands: %d", len(c.args)-1)
			}
		}
		r.settleCondition()
	}
}

// settleCondition fixes the condition error of an expression once a
// comparison or function has one: DynamoDB checks each as it parses it and
// keeps the first one's error, names and values first, then operand
// counts, distinct operands, operand types.
func (r *resolver) settleCondition() {
	if _, ok := r.errs[catCondition]; ok {
		return
	}
	for _, c := range []string{catName, catCount, catDistinct, catFunction} {
		if m, ok := r.errs[c]; ok {
			r.errs[catCondition] = m
			return
		}
	}
}

// checkOperands resolves operands and checks the functions among them.
func checkOperands(r *resolver, ops ...*operand) {
	for _, o := range ops {
		r.operand(o)
		checkCondFunc(r, o)
	}
}

// checkCondFunc checks a function call of a condition (recursively).
func checkCondFunc(r *resolver, o *operand) {
	if o.typ != opFunc {
		return
	}
	for _, a := range o.args {
		if a.typ == opFunc && a.name != "size" {
			r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: %s", a.name)
		}
		checkCondFunc(r, a)
	}
	n, known := condFuncs[o.name]
	if !known {
		if _, upd := updateFuncs[o.name]; upd {
			r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: %s", o.name)
			return
		}
		r.errs.add(catUnknownFn, "Invalid function name; function: %s", o.name)
		return
	}
	if n != len(o.args) {
		r.errs.add(catCount, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d", o.name, len(o.args))
		return
	}
	checkDistinct(r, o.name, o.args)
	switch o.name {
	case "attribute_exists", "attribute_not_exists":
		if o.args[0].typ != opPath {
			r.errs.add(catFunction, "Operator or function requires a document path; operator or function: %s", o.name)
		}
	case "begins_with":
		for _, a := range o.args {
			if t := staticType(a); t != "" && t != "S" && t != "B" {
				r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", o.name, t)
				return
			}
		}
	case "attribute_type":
		t := staticType(o.args[1])
		if t != "S" {
			if t == "" {
				t = "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
			}
			r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", o.name, t)
			return
		}
		if o.args[1].typ == opValue && abi.KindOf(o.args[1].val.Str) == abi.KindInvalid {
			r.errs.add(catFunction, "Invalid attribute type name found; type: %s, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}", o.args[1].val.Str)
		}
	case "size":
		switch t := staticType(o.args[0]); t {
		case "N", "BOOL", "NULL":
			r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", o.name, t)
		}
	}
}

// staticType is the type an operand is known to have before evaluation: the
// type of an :value, N for size(), "" when it depends on the item.
func staticType(o *operand) string {
	switch o.typ {
	case opValue:
		if o.val.IsZero() {
			return ""
		}
		return o.val.Kind.String()
	case opFunc:
		if o.name == "size" {
			return "N"
		}
	}
	return ""
}

// checkOrderedTypes reports an :value of a type that has no order (only N,
// S and B do) given to an ordering comparison.
func checkOrderedTypes(r *resolver, op string, args []*operand) {
	for _, a := range args {
		switch t := staticType(a); t {
		case "", "N", "S", "B":
		default:
			r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", op, t)
			return
		}
	}
}

// checkDistinct reports two identical document paths as the two operands.
func checkDistinct(r *resolver, op string, args []*operand) {
	if len(args) != 2 || args[0].typ != opPath || args[1].typ != opPath {
		return
	}
	if args[0].path.Equal(args[1].path) {
		r.errs.add(catDistinct, "The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s", op, pathList(args[0].path))
	}
}

// checkBetween checks constant BETWEEN bounds: same type, lower <= upper.
func checkBetween(r *resolver, lo, hi *operand) {
	if lo.typ != opValue || hi.typ != opValue || lo.val.IsZero() || hi.val.IsZero() {
		return
	}
	desc := "lower bound operand: AttributeValue: {" + valueDesc(lo.val) + "}, upper bound operand: AttributeValue: {" + valueDesc(hi.val) + "}"
	if lo.val.Kind != hi.val.Kind {
		r.errs.add(catFunction, "The BETWEEN operator requires same data type for lower and upper bounds; %s", desc)
		return
	}
	if c, ok := Compare(lo.val, hi.val); ok && c > 0 {
		r.errs.add(catFunction, "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; %s", desc)
	}
}

// Paths returns the document paths the condition reads, in the order
// written (inside functions too).
func (c *Condition) Paths() []Path {
	var out []Path
	var walkOp func(o *operand)
	walkOp = func(o *operand) {
		switch o.typ {
		case opPath:
			out = append(out, o.path)
		case opFunc:
			for _, a := range o.args {
				walkOp(a)
			}
		}
	}
	var walk func(n *cond)
	walk = func(n *cond) {
		for _, k := range n.kids {
			walk(k)
		}
		for _, a := range n.args {
			walkOp(a)
		}
		if n.fn != nil {
			walkOp(n.fn)
		}
	}
	walk(c.root)
	return out
}

// Eval evaluates the condition against item, which may be nil (absent
// item: every path is then absent). A condition never fails at run time;
// the error is always nil and is there for future use.
func (c *Condition) Eval(item abi.Item) (bool, error) {
	return evalCond(c.root, item), nil
}

func evalCond(c *cond, item abi.Item) bool {
	switch c.typ {
	case cOr:
		return evalCond(c.kids[0], item) || evalCond(c.kids[1], item)
	case cAnd:
		return evalCond(c.kids[0], item) && evalCond(c.kids[1], item)
	case cNot:
		return !evalCond(c.kids[0], item)
	case cParen:
		return evalCond(c.kids[0], item)
	case cCmp:
		a, aok := evalOperand(c.args[0], item)
		b, bok := evalOperand(c.args[1], item)
		return compareOp(c.op, a, aok, b, bok)
	case cBetween:
		v, ok := evalOperand(c.args[0], item)
		lo, lok := evalOperand(c.args[1], item)
		hi, hok := evalOperand(c.args[2], item)
		if !ok || !lok || !hok || v.Kind != lo.Kind || v.Kind != hi.Kind {
			return false
		}
		c1, ok1 := Compare(v, lo)
		c2, ok2 := Compare(v, hi)
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	case cIn:
		v, ok := evalOperand(c.args[0], item)
		if !ok {
			return false
		}
		for _, o := range c.args[1:] {
			if w, ok := evalOperand(o, item); ok && valuesEqual(v, w) {
				return true
			}
		}
		return false
	case cFunc:
		return evalBoolFunc(c.fn, item)
	}
	return false
}

// compareOp applies a comparator. Absent operands and operands of different
// types compare false, except that <> is then true.
func compareOp(op string, a abi.Value, aok bool, b abi.Value, bok bool) bool {
	switch op {
	case "=":
		return aok && bok && valuesEqual(a, b)
	case "<>":
		return !(aok && bok && valuesEqual(a, b))
	}
	if !aok || !bok || a.Kind != b.Kind {
		return false
	}
	c, ok := Compare(a, b)
	if !ok {
		return false
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
