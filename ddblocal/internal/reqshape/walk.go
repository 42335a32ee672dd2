package reqshape

import (
	"context"
	"errors"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// ErrTooMany is returned by Walk for a body with more list elements and
// map members outside its attribute values than it was allowed.
var ErrTooMany = errors.New("reqshape: too many list elements and map members")

// Result is what Walk found in a body.
type Result struct {
	// Serialization is set when a member has the wrong JSON type: call
	// Normalize for DynamoDB's SerializationException.
	Serialization bool
	// Convert is set when a member holds a value DynamoDB converts to
	// its type (a string for a Boolean, a decimal for an Integer): call
	// Normalize for the body to decode.
	Convert bool

	early    string   // the first Required or TableName failure
	failures []string // constraint failures, at most maxFailures
}

// maxFailures is how many constraint failures DynamoDB lists.
const maxFailures = 10

// Err returns the ValidationException of the constraint failures, nil
// when there are none: the first failed Required or TableName check
// (DynamoDB makes those first), else "N validation errors detected: "
// and the failures.
func (r *Result) Err() error {
	if r.early != "" {
		return apierr.Validation("%s", r.early)
	}
	if len(r.failures) == 0 {
		return nil
	}
	n := "1 validation error detected: "
	if len(r.failures) > 1 {
		n = itoa(int64(len(r.failures))) + " validation errors detected: "
	}
	return apierr.Validation("%s%s", n, strings.Join(r.failures, "; "))
}

// Walk walks body (valid JSON) against shape s: the JSON type of every
// member outside attribute values, and the constraints of s. It counts
// the list elements and map members it walks (unknown members
// included; attribute values are skipped) and returns ErrTooMany past
// maxMembers (0: no limit), and ctx's error once ctx ends (it looks
// every megabyte; ctx may be nil). A nil s counts members only.
func Walk(ctx context.Context, body []byte, s *Shape, maxMembers int) (Result, error) {
	w := walker{b: body, max: maxMembers, next: stopEvery, ctx: ctx}
	w.ws()
	if w.pos >= len(w.b) {
		return w.r, nil
	}
	if s == nil || w.b[w.pos] != '{' {
		if s != nil {
			w.r.Serialization = true
			return w.r, nil
		}
		err := w.any()
		return w.r, err
	}
	err := w.structure(s, true)
	return w.r, err
}

// stopEvery is how many bytes the walk goes between looks at its context.
const stopEvery = 1 << 20

type walker struct {
	b      []byte
	pos    int
	n, max int
	next   int
	ctx    context.Context
	r      Result
	path   [16]seg
	depth  int
}

// val is a value a constraint is checked on.
type val struct {
	null  bool
	kind  byte   // '"' string, '0' number, '[' list, '{' map, 't' boolean
	s     []byte // a string's bytes
	num   float64
	n     int // a string's length (UTF-16 units), a list's or map's size
	start int // where its JSON starts, to render it in a message
}

// seg is one step of where a value sits: a field name (its first letter
// lowered when shown), a map key or "member" (raw), or a list position.
type seg struct {
	name string
	idx  int // a list position (from 1) instead of name
	raw  bool
}

// push and pop keep the path of the value being walked (request shapes
// nest a few levels; deeper steps than the array holds are not shown).
func (w *walker) push(sg seg) {
	if w.depth < len(w.path) {
		w.path[w.depth] = sg
	}
	w.depth++
}

func (w *walker) pop() { w.depth-- }

// pathString renders where the current value sits, as DynamoDB's
// messages do ("globalSecondaryIndexes.1.member.keySchema").
func (w *walker) pathString() string {
	path := w.path[:min(w.depth, len(w.path))]
	segs := make([]string, len(path))
	for i, sg := range path {
		switch {
		case sg.idx > 0:
			segs[i] = itoa(int64(sg.idx))
		case sg.raw:
			segs[i] = sg.name
		default:
			segs[i] = lowerFirst(sg.name)
		}
	}
	return strings.Join(segs, ".")
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

func (w *walker) ws() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *walker) count() error {
	w.n++
	if w.max > 0 && w.n > w.max {
		return ErrTooMany
	}
	if w.pos >= w.next {
		w.next = w.pos + stopEvery
		if w.ctx != nil {
			return w.ctx.Err()
		}
	}
	return nil
}

// member is one member of a JSON object: its name and where its value
// starts.
type member struct {
	name  []byte
	start int // where its value starts
}

// members reads the object at w.pos into ms (its values skipped),
// counting them, and leaves w.pos past it.
func (w *walker) members(ms []member) ([]member, error) {
	w.pos++ // '{'
	for {
		w.ws()
		if w.pos >= len(w.b) {
			return ms, nil
		}
		switch w.b[w.pos] {
		case '}':
			w.pos++
			return ms, nil
		case ',':
			w.pos++
			continue
		}
		if err := w.count(); err != nil {
			return ms, err
		}
		name := w.str()
		w.ws()
		w.pos++ // ':'
		w.ws()
		ms = append(ms, member{name: name, start: w.pos})
		if err := w.skip(); err != nil {
			return ms, err
		}
	}
}

// structure walks the object at w.pos as structure s.
func (w *walker) structure(s *Shape, top bool) error {
	var buf [16]member
	ms, err := w.members(buf[:0])
	if err != nil {
		return err
	}
	end := w.pos
	for i := range s.Fields {
		f := &s.Fields[i]
		at := -1
		for _, m := range ms {
			if string(m.name) == f.Name {
				at = m.start
			}
		}
		w.push(seg{name: f.Name})
		if at < 0 || w.b[at] == 'n' {
			w.checks(f, val{null: true}, top)
			w.pop()
			continue
		}
		if k := f.Shape.Kind; (k == AttrValue || k == AttrMap) && len(f.Checks) <= 1 {
			// attribute values are decoded later: only their JSON kind here
			if w.b[at] != '{' {
				w.r.Serialization = true
				return nil
			}
			w.pop()
			continue
		}
		w.pos = at
		err := w.value(f, top)
		w.pop()
		if err != nil || w.r.Serialization {
			return err
		}
	}
	for _, m := range ms {
		if s.field(m.name) == nil {
			w.pos = m.start
			if err := w.any(); err != nil {
				return err
			}
		}
	}
	w.pos = end
	return nil
}

func (s *Shape) field(name []byte) *Field {
	for i := range s.Fields {
		if s.Fields[i].Name == string(name) {
			return &s.Fields[i]
		}
	}
	return nil
}

// value walks the value (not null) at w.pos of field f.
func (w *walker) value(f *Field, top bool) error {
	s := f.Shape
	c := w.b[w.pos]
	start := w.pos
	switch s.Kind {
	case String:
		if c != '"' {
			w.r.Serialization = true
			return nil
		}
		b := w.str()
		w.checks(f, val{kind: '"', s: b, n: utf16Len(b), start: start}, top)
	case Boolean:
		switch c {
		case 't', 'f':
			w.skipScalar()
		case '"':
			if _, ok := boolText(w.str()); !ok {
				w.r.Serialization = true
				return nil
			}
			w.r.Convert = true
		default:
			w.r.Serialization = true
		}
	case Integer, Long:
		if c != '-' && (c < '0' || c > '9') {
			w.r.Serialization = true
			return nil
		}
		text := w.number()
		num, integral := parseNumber(text)
		if !integral {
			w.r.Convert = true
		}
		w.checks(f, val{kind: '0', num: num, start: start}, top)
	case List:
		if c != '[' {
			w.r.Serialization = true
			return nil
		}
		n, err := w.length()
		if err != nil {
			return err
		}
		w.checks(f, val{kind: '[', n: n, start: start}, top)
		w.pos++
		for i := 0; ; i++ {
			w.ws()
			if w.b[w.pos] == ']' {
				w.pos++
				break
			}
			if w.b[w.pos] == ',' {
				w.pos++
				w.ws()
			}
			if err := w.count(); err != nil {
				return err
			}
			w.push(seg{idx: i + 1})
			w.push(seg{name: "member", raw: true})
			var err error
			if w.b[w.pos] == 'n' {
				w.pos += 4
				w.checks(s.Elem, val{null: true}, false)
			} else {
				err = w.value(s.Elem, false)
			}
			w.pop()
			w.pop()
			if err != nil || w.r.Serialization {
				return err
			}
		}
	case Map:
		if c != '{' {
			w.r.Serialization = true
			return nil
		}
		var buf [8]member
		ms, err := w.members(buf[:0])
		if err != nil {
			return err
		}
		end := w.pos
		w.mapChecks(f, ms, start, top)
		for _, m := range ms {
			w.push(seg{name: string(m.name), raw: true})
			w.push(seg{name: "member", raw: true})
			w.pos = m.start
			var err error
			if w.b[w.pos] == 'n' {
				w.checks(s.Elem, val{null: true}, false)
			} else {
				err = w.value(s.Elem, false)
			}
			w.pop()
			w.pop()
			if err != nil || w.r.Serialization {
				return err
			}
		}
		w.pos = end
	case Struct:
		if c != '{' {
			w.r.Serialization = true
			return nil
		}
		w.checks(f, val{kind: '{', start: start}, top)
		return w.structure(s, false)
	case AttrValue, AttrMap:
		if c != '{' {
			w.r.Serialization = true
			return nil
		}
		if len(f.Checks) > 1 || (len(f.Checks) == 1 && f.Checks[0].Op != NotNull) {
			n, err := w.length()
			if err != nil {
				return err
			}
			w.checks(f, val{kind: '{', n: n, start: start}, top)
		}
		return w.skip()
	}
	return nil
}

// boolText is DynamoDB's reading of a string given for a Boolean.
func boolText(b []byte) (v, ok bool) {
	switch strings.ToUpper(string(b)) {
	case "TRUE", "1", "YES":
		return true, true
	case "FALSE", "0", "NO":
		return false, true
	}
	return false, false
}
