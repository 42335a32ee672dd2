package reqshape

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// checks runs f's constraints on v, recording failures; top tells that f
// is a parameter of the request itself (Required and TableName apply).
func (w *walker) checks(f *Field, v val, top bool) {
	for i := range f.Checks {
		c := &f.Checks[i]
		if c.Arn != 0 && v.kind == '"' && bytes.HasPrefix(v.s, arnPrefix) != (c.Arn > 0) {
			continue
		}
		switch c.Op {
		case Required:
			if top && v.null && w.r.early == "" {
				w.r.early = "The parameter '" + f.Name + "' is required but was not present in the request"
			}
		case TableName:
			if top && !v.null && (v.n < 3 || v.n > 255) && w.r.early == "" {
				w.r.early = f.Name + " must be at least 3 characters long and at most 255 characters long"
			}
		case NotNull:
			if v.null {
				w.fail(v, "Member must not be null")
			}
		}
		if v.null {
			continue
		}
		switch c.Op {
		case Pattern:
			if v.kind == '"' && !c.matchBytes(v.s) {
				w.fail(v, "Member must satisfy regular expression pattern: "+c.S)
			}
		case MinLen:
			if int64(v.n) < c.N {
				w.fail(v, "Member must have length greater than or equal to "+itoa(c.N))
			}
		case MaxLen:
			if int64(v.n) > c.N {
				w.fail(v, "Member must have length less than or equal to "+itoa(c.N))
			}
		case Enum:
			if v.kind == '"' && !in(v.s, c.Enum) {
				w.fail(v, "Member must satisfy enum value set: ["+strings.Join(c.Enum, ", ")+"]")
			}
		case Min:
			if v.kind == '0' && v.num < float64(c.N) {
				w.fail(v, "Member must have value greater than or equal to "+itoa(c.N))
			}
		case Max:
			if v.kind == '0' && v.num > float64(c.N) {
				w.fail(v, "Member must have value less than or equal to "+itoa(c.N))
			}
		}
	}
}

var arnPrefix = []byte("arn:")

// mapChecks runs f's constraints on the map ms (at start), keys and
// values included.
func (w *walker) mapChecks(f *Field, ms []member, start int, top bool) {
	v := val{kind: '{', n: len(ms), start: start}
	for i := range f.Checks {
		c := &f.Checks[i]
		switch c.Op {
		case KeysMatch:
			for _, m := range ms {
				if !subOK(c.Sub, m.name, utf16Len(m.name)) {
					w.fail(v, "Map keys must satisfy constraint: ["+subWords(c.Sub)+"]")
				}
			}
		case Values:
			for _, m := range ms {
				at := w.pos
				w.pos = m.start
				n, _ := w.length()
				w.pos = at
				if w.b[m.start] != 'n' && !subOK(c.Sub, nil, n) {
					w.fail(v, "Map value must satisfy constraint: ["+subWords(c.Sub)+"]")
				}
			}
		default:
			w.checks(&Field{Name: f.Name, Checks: f.Checks[i : i+1]}, v, top)
		}
	}
}

func subOK(cs []Check, s []byte, n int) bool {
	for i := range cs {
		c := &cs[i]
		switch c.Op {
		case MinLen:
			if int64(n) < c.N {
				return false
			}
		case MaxLen:
			if int64(n) > c.N {
				return false
			}
		case Pattern:
			if !c.matchBytes(s) {
				return false
			}
		}
	}
	return true
}

func subWords(cs []Check) string {
	var out []string
	for _, c := range cs {
		switch c.Op {
		case MinLen:
			out = append(out, "Member must have length greater than or equal to "+itoa(c.N))
		case MaxLen:
			out = append(out, "Member must have length less than or equal to "+itoa(c.N))
		case Pattern:
			out = append(out, "Member must satisfy regular expression pattern: "+c.S)
		}
	}
	return strings.Join(out, ", ")
}

func in(b []byte, set []string) bool {
	for _, s := range set {
		if string(b) == s {
			return true
		}
	}
	return false
}

// fail records a constraint failure of the value v where the walk is.
func (w *walker) fail(v val, msg string) {
	if len(w.r.failures) >= maxFailures {
		return
	}
	value := "null"
	if !v.null {
		value = "'" + w.render(v) + "'"
	}
	w.r.failures = append(w.r.failures, "Value "+value+" at '"+w.pathString()+"' failed to satisfy constraint: "+msg)
}

// maxRendered is the longest JSON of a list or map a message shows; a
// longer one is shown as [...] or {...}.
const maxRendered = 1024

// render writes a value as DynamoDB's messages show it: a string as is,
// a list as [a, b], a structure or map as JSON.
func (w *walker) render(v val) string {
	switch v.kind {
	case '"':
		return string(v.s)
	case '0':
		return strconv.FormatFloat(v.num, 'f', -1, 64)
	}
	at := w.pos
	w.pos = v.start
	_ = w.skip()
	raw := w.b[v.start:w.pos]
	w.pos = at
	if len(raw) > maxRendered {
		if v.kind == '[' {
			return "[...]"
		}
		return "{...}"
	}
	var x any
	if json.Unmarshal(raw, &x) != nil {
		return string(raw)
	}
	return renderAny(x)
}

// renderAny writes a JSON value as DynamoDB's messages show values, the
// way Java prints them: a map as {k=v, ...} (keys sorted), a list of
// scalars as [a, b], a list holding lists or maps as [...].
func renderAny(x any) string {
	switch t := x.(type) {
	case nil:
		return "null"
	case string:
		return t
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			switch e.(type) {
			case []any, map[string]any:
				return "[...]"
			}
			parts[i] = renderAny(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + renderAny(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(x)
	return string(b)
}
