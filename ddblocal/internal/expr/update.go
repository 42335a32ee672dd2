package expr

import "strings"

// actType is the clause an update action belongs to.
type actType int

const (
	aSet actType = iota
	aRemove
	aAdd
	aDelete
)

var sectionNames = [...]string{"SET", "REMOVE", "ADD", "DELETE"}

// setVal is the right side of a SET action: a, or a + b, or a - b.
type setVal struct {
	op   string // "", "+" or "-"
	a, b *operand
}

// action is one action of an update expression.
type action struct {
	typ  actType
	raw  []rawElem
	path Path
	val  *setVal  // aSet
	arg  *operand // aAdd, aDelete: an :value
	// legacy marks an action of AttributeUpdates (LegacyUpdates): ADD
	// appends lists, and type mismatches have that parameter's message.
	legacy bool
}

// Update is a parsed UpdateExpression.
type Update struct {
	actions []*action
}

// updateErrorOrder is the order in which DynamoDB reports an update's errors.
var updateErrorOrder = []string{catParens, catReserved, catUnknownFn, catMisused, catSection, catName, catValue, catOverlap, catConflict, catOperand, catFunction}

// ParseUpdate parses an UpdateExpression: SET, REMOVE, ADD and DELETE
// clauses, each at most once, in any order.
func ParseUpdate(src string, params *Params) (*Update, error) {
	if err := precheck(src, kindUpdate); err != nil {
		return nil, err
	}
	p := newParser(src, kindUpdate, sectionNames[:]...)
	if p.peek().kind == tEOF {
		return nil, emptyError(kindUpdate)
	}
	var acts []*action
	var sections []actType
	ok := true
	for ok && p.peek().kind != tEOF {
		t := p.peek()
		typ := -1
		for i, s := range sectionNames {
			if p.isKeyword(t, s) {
				typ = i
			}
		}
		if typ < 0 {
			ok = p.fail()
			break
		}
		p.pos++
		sections = append(sections, actType(typ))
		for {
			a, aok := p.parseAction(actType(typ))
			if !aok {
				ok = false
				break
			}
			acts = append(acts, a)
			if t := p.peek(); t.kind != tPunct || t.text != "," {
				break
			}
			p.pos++
		}
	}
	if err := p.finish(ok); err != nil {
		return nil, err
	}
	r := newResolver(params, catName, catValue)
	seen := map[actType]bool{}
	for _, s := range sections {
		if seen[s] {
			r.errs.add(catSection, "The \"%s\" section can only be used once in an update expression;", sectionNames[s])
		}
		seen[s] = true
	}
	var paths []Path
	for _, a := range acts {
		a.path = r.path(a.raw)
		checkOverlap(r, paths, a.path)
		paths = append(paths, a.path)
		switch a.typ {
		case aSet:
			checkSetVal(r, a.val)
		case aAdd, aDelete:
			r.operand(a.arg)
			checkAddDelete(r, a)
		}
	}
	if err := r.errs.first(kindUpdate, updateErrorOrder...); err != nil {
		return nil, err
	}
	return &Update{actions: acts}, nil
}

// parseAction parses one action of a clause.
func (p *parser) parseAction(typ actType) (*action, bool) {
	raw, ok := p.parsePath()
	if !ok {
		return nil, false
	}
	a := &action{typ: typ, raw: raw}
	switch typ {
	case aSet:
		if !p.punct("=") {
			return nil, false
		}
		v, ok := p.parseSetVal()
		if !ok {
			return nil, false
		}
		a.val = v
	case aAdd, aDelete:
		t := p.peek()
		if t.kind != tValue {
			return nil, p.fail()
		}
		p.pos++
		a.arg = &operand{typ: opValue, name: t.text}
	}
	return a, true
}

// parseSetVal parses operand [('+'|'-') operand], or the same in parentheses.
func (p *parser) parseSetVal() (*setVal, bool) {
	save := p.pos
	if a, ok := p.parseOperand(); ok {
		t := p.peek()
		if t.kind == tPunct && (t.text == "+" || t.text == "-") {
			p.pos++
			if b, ok := p.parseOperand(); ok {
				return &setVal{op: t.text, a: a, b: b}, true
			}
		} else {
			return &setVal{a: a}, true
		}
	}
	p.pos = save
	if t := p.peek(); t.kind == tPunct && t.text == "(" {
		p.pos++
		v, ok := p.parseSetVal()
		if ok && p.punct(")") {
			return v, true
		}
	}
	p.pos = save
	return nil, p.fail()
}

// checkSetVal resolves and checks the right side of a SET action.
func checkSetVal(r *resolver, v *setVal) {
	r.operand(v.a)
	checkUpdateFunc(r, v.a)
	if v.op == "" {
		return
	}
	r.operand(v.b)
	checkUpdateFunc(r, v.b)
	for _, o := range []*operand{v.a, v.b} {
		if t := immediateType(o); t != "" && t != "N" {
			r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", v.op, t)
			return
		}
	}
}

// immediateType is the type of an :value operand, "" for anything else.
func immediateType(o *operand) string {
	if o.typ == opValue && !o.val.IsZero() {
		return o.val.Kind.String()
	}
	return ""
}

// checkUpdateFunc checks a function call of an update (recursively).
func checkUpdateFunc(r *resolver, o *operand) {
	if o.typ != opFunc {
		return
	}
	for _, a := range o.args {
		// DynamoDB refuses list_append nested in another function call
		// (list_append(if_not_exists(a, :v), :w) is fine, the reverse
		// nesting or list_append(list_append(...), ...) is not).
		if a.typ == opFunc && a.name == "list_append" {
			r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: %s", a.name)
		}
		checkUpdateFunc(r, a)
	}
	n, known := updateFuncs[o.name]
	if !known {
		if _, c := condFuncs[o.name]; c {
			r.errs.add(catMisused, "The function is not allowed to be used this way in an expression; function: %s", o.name)
			return
		}
		r.errs.add(catUnknownFn, "Invalid function name; function: %s", o.name)
		return
	}
	if n != len(o.args) {
		r.errs.add(catFunction, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d", o.name, len(o.args))
		return
	}
	switch o.name {
	case "if_not_exists":
		if o.args[0].typ != opPath {
			r.errs.add(catFunction, "Operator or function requires a document path; operator or function: %s", o.name)
		}
	case "list_append":
		for _, a := range o.args {
			if t := immediateType(a); t != "" && t != "L" {
				r.errs.add(catFunction, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", o.name, t)
				return
			}
		}
	}
}

// typeWords are the type names of ADD / DELETE operand errors.
var typeWords = map[string]string{"S": "STRING", "N": "NUMBER", "B": "BINARY", "NULL": "NULL", "BOOL": "BOOLEAN", "L": "LIST", "M": "MAP"}

// checkAddDelete checks the :value of ADD (a number or a set) or DELETE (a set).
func checkAddDelete(r *resolver, a *action) {
	t := immediateType(a.arg)
	if w, ok := typeWords[t]; ok && !(a.typ == aAdd && t == "N") {
		r.errs.add(catOperand, "Incorrect operand type for operator or function; operator: %s, operand type: %s", sectionNames[a.typ], w)
	}
}

// Paths returns the document paths the update sets or removes, in the order
// written (for key-attribute checks and UPDATED_OLD / UPDATED_NEW).
func (u *Update) Paths() []Path {
	out := make([]Path, len(u.actions))
	for i, a := range u.actions {
		out[i] = a.path
	}
	return out
}

// String returns a readable form of the update (for logs).
func (u *Update) String() string {
	parts := make([]string, len(u.actions))
	for i, a := range u.actions {
		parts[i] = sectionNames[a.typ] + " " + a.path.String()
	}
	return strings.Join(parts, ", ")
}

// Target is one path an update writes, with the type its value is known
// to have before the update runs ("" when it depends on the item): an
// :value's type, N for + and -, L for list_append, the default's for
// if_not_exists; REMOVE writes no value.
type Target struct {
	Path Path
	Type string
}

// Targets returns the paths the update writes, in the order written.
func (u *Update) Targets() []Target {
	out := make([]Target, len(u.actions))
	for i, a := range u.actions {
		out[i].Path = a.path
		switch {
		case a.typ == aSet && a.val.op != "":
			out[i].Type = "N"
		case a.typ == aSet:
			out[i].Type = operandType(a.val.a)
		case a.arg != nil:
			out[i].Type = operandType(a.arg)
		}
	}
	return out
}

func operandType(o *operand) string {
	switch o.typ {
	case opValue:
		if o.val.IsZero() {
			return ""
		}
		return o.val.Kind.String()
	case opFunc:
		switch o.name {
		case "list_append":
			return "L"
		case "if_not_exists":
			if len(o.args) == 2 {
				return operandType(o.args[1])
			}
		}
	}
	return ""
}

// OperandPaths returns the document paths the update reads (right-hand
// sides, function arguments included).
func (u *Update) OperandPaths() []Path {
	var out []Path
	var walk func(o *operand)
	walk = func(o *operand) {
		switch o.typ {
		case opPath:
			out = append(out, o.path)
		case opFunc:
			for _, a := range o.args {
				walk(a)
			}
		}
	}
	for _, a := range u.actions {
		if a.val != nil {
			walk(a.val.a)
			if a.val.b != nil {
				walk(a.val.b)
			}
		}
	}
	return out
}
