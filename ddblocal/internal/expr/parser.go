package expr

import (
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// maxIndex bounds list indices in document paths; larger ones are syntax errors.
const maxIndex = 1<<31 - 1

// rawElem is one element of a document path as written: a bare name, a
// #name placeholder or a list index.
type rawElem struct {
	text    string
	isName  bool // #placeholder
	isIndex bool
	index   int
}

// opType is the kind of an operand.
type opType int

const (
	opPath opType = iota
	opValue
	opFunc
)

// operand is a path, an :value or a function call, as parsed and then
// resolved against the request's names and values.
type operand struct {
	typ    opType
	raw    []rawElem  // opPath
	name   string     // :value name or function name
	args   []*operand // opFunc
	parens int        // parentheses written around it

	path Path      // resolved opPath
	val  abi.Value // resolved opValue
}

// parser is a backtracking recursive-descent parser over a token slice. far
// is the furthest token index at which an alternative failed: the token a
// syntax error names.
type parser struct {
	src      string
	toks     []token
	pos      int
	far      int
	k        kind
	keywords map[string]bool
}

func newParser(src string, k kind, keywords ...string) *parser {
	p := &parser{src: src, toks: lex(src), k: k, keywords: map[string]bool{}}
	for _, w := range keywords {
		p.keywords[w] = true
	}
	return p
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}

// fail records the current position as a failure point and returns false.
func (p *parser) fail() bool {
	if p.pos > p.far {
		p.far = p.pos
	}
	return false
}

func (p *parser) isKeyword(t token, w string) bool {
	return t.kind == tIdent && strings.EqualFold(t.text, w) && p.keywords[w]
}

func (p *parser) anyKeyword(t token) bool {
	return t.kind == tIdent && p.keywords[strings.ToUpper(t.text)]
}

// punct consumes the punctuation s.
func (p *parser) punct(s string) bool {
	t := p.peek()
	if t.kind == tPunct && t.text == s {
		p.pos++
		return true
	}
	return p.fail()
}

// keyword consumes the keyword w (case-insensitive).
func (p *parser) keyword(w string) bool {
	if p.isKeyword(p.peek(), w) {
		p.pos++
		return true
	}
	return p.fail()
}

// atEnd reports a syntax error unless all tokens were consumed.
func (p *parser) finish(ok bool) error {
	if ok && p.peek().kind == tEOF {
		return nil
	}
	if !ok || p.pos > p.far {
		p.fail()
	}
	return syntaxError(p.k, p.src, p.toks, p.far)
}

// pathElem parses a bare name or a #name.
func (p *parser) pathElem() (rawElem, bool) {
	t := p.peek()
	switch {
	case t.kind == tIdent && !p.anyKeyword(t):
		p.pos++
		return rawElem{text: t.text}, true
	case t.kind == tName:
		p.pos++
		return rawElem{text: t.text, isName: true}, true
	}
	return rawElem{}, p.fail()
}

// parsePath parses a document path: elem { '.' elem | '[' number ']' }.
func (p *parser) parsePath() ([]rawElem, bool) {
	e, ok := p.pathElem()
	if !ok {
		return nil, false
	}
	tail, ok := p.pathTail()
	if !ok {
		return nil, false
	}
	return append([]rawElem{e}, tail...), true
}

// pathTail parses { '.' elem | '[' number ']' } after a path's head.
func (p *parser) pathTail() ([]rawElem, bool) {
	var path []rawElem
	for {
		t := p.peek()
		if t.kind != tPunct || (t.text != "." && t.text != "[") {
			return path, true
		}
		p.pos++
		if t.text == "." {
			e, ok := p.pathElem()
			if !ok {
				return nil, false
			}
			path = append(path, e)
			continue
		}
		n := p.peek()
		if n.kind != tNumber {
			return nil, p.fail()
		}
		idx, err := strconv.Atoi(n.text)
		if err != nil || idx > maxIndex {
			return nil, p.fail()
		}
		p.pos++
		if !p.punct("]") {
			return nil, false
		}
		path = append(path, rawElem{text: n.text, isIndex: true, index: idx})
	}
}

// parseOperand parses '(' operand ')' | function call | :value | path.
func (p *parser) parseOperand() (*operand, bool) {
	save := p.pos
	t := p.peek()
	if t.kind == tPunct && t.text == "(" {
		p.pos++
		o, ok := p.parseOperand()
		if ok && p.punct(")") {
			o.parens++
			// a path in parentheses may go on: ((a.b)).c is a.b.c
			if o.typ == opPath {
				if tail, ok := p.pathTail(); ok && len(tail) > 0 {
					o.raw = append(o.raw, tail...)
				} else if !ok {
					p.pos = save
					return nil, false
				}
			}
			return o, true
		}
		p.pos = save
		return nil, false
	}
	if t.kind == tIdent && !p.anyKeyword(t) && p.peekAt(1).kind == tPunct && p.peekAt(1).text == "(" {
		p.pos += 2
		args, ok := p.operandList()
		if !ok || !p.punct(")") {
			p.pos = save
			return nil, false
		}
		return &operand{typ: opFunc, name: t.text, args: args}, true
	}
	if t.kind == tValue {
		p.pos++
		return &operand{typ: opValue, name: t.text}, true
	}
	raw, ok := p.parsePath()
	if !ok {
		p.pos = save
		return nil, false
	}
	return &operand{typ: opPath, raw: raw}, true
}

// operandList parses operand { ',' operand }.
func (p *parser) operandList() ([]*operand, bool) {
	o, ok := p.parseOperand()
	if !ok {
		return nil, false
	}
	list := []*operand{o}
	for {
		t := p.peek()
		if t.kind != tPunct || t.text != "," {
			return list, true
		}
		p.pos++
		o, ok := p.parseOperand()
		if !ok {
			return nil, false
		}
		list = append(list, o)
	}
}

// resolver resolves names and values of one expression against Params,
// recording errors by category.
type resolver struct {
	params *Params
	errs   errSet
	// nameCat and valueCat are the categories for undefined names / values.
	nameCat, valueCat string
}

func newResolver(p *Params, nameCat, valueCat string) *resolver {
	if p == nil {
		p = NewParams(nil, nil)
	}
	return &resolver{params: p, errs: errSet{}, nameCat: nameCat, valueCat: valueCat}
}

// path resolves a raw path, checking reserved words and placeholders.
func (r *resolver) path(raw []rawElem) Path {
	out := make(Path, 0, len(raw))
	for _, e := range raw {
		switch {
		case e.isIndex:
			out = append(out, PathElem{Index: e.index, IsIndex: true})
		case e.isName:
			n, ok := r.params.name(e.text)
			if !ok {
				r.errs.add(r.nameCat, "An expression attribute name used in the document path is not defined; attribute name: %s", e.text)
			}
			out = append(out, PathElem{Name: n})
		default:
			if IsReserved(e.text) {
				r.errs.add(catReserved, "Attribute name is a reserved keyword; reserved keyword: %s", e.text)
			}
			out = append(out, PathElem{Name: e.text})
		}
	}
	return out
}

// value resolves a :value.
func (r *resolver) value(name string) abi.Value {
	v, ok := r.params.value(name)
	if !ok {
		r.errs.add(r.valueCat, "An expression attribute value used in expression is not defined; attribute value: %s", name)
	}
	return v
}

// operand resolves an operand tree (paths and values, recursively).
func (r *resolver) operand(o *operand) {
	switch o.typ {
	case opPath:
		o.path = r.path(o.raw)
	case opValue:
		o.val = r.value(o.name)
	case opFunc:
		for _, a := range o.args {
			r.operand(a)
		}
	}
	if o.parens > 1 {
		r.errs.add(catParens, "The expression has redundant parentheses;")
	}
}

// pathList formats a path the way DynamoDB's messages do: [a, b, [2]].
func pathList(p Path) string {
	parts := make([]string, len(p))
	for i, e := range p {
		if e.IsIndex {
			parts[i] = "[" + strconv.Itoa(e.Index) + "]"
		} else {
			parts[i] = e.Name
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// String returns the path in DynamoDB's notation (a.b[2].c).
func (p Path) String() string {
	var b strings.Builder
	for i, e := range p {
		if e.IsIndex {
			b.WriteString("[" + strconv.Itoa(e.Index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.Name)
	}
	return b.String()
}

// Equal reports whether two paths are the same.
func (p Path) Equal(q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}
