package ddbjson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/dynafold/dynafold/abi"
)

// decoder decodes DynamoDB JSON in one pass over its input, building each
// value once. Before it decodes a list, a set or a map it counts the
// members (a scan that allocates nothing), so every slice and map is made
// at its final size, and a container with more members than the limits
// leave room for is refused before any of them is built.
type decoder struct {
	b     []byte
	pos   int
	lim   Limits
	size  int // running size of the item
	vsize int // running size of the current attribute's value
	attr  string
	jsonD int // JSON nesting depth
	// names, when set, interns attribute names: the items of one answer
	// share their names' strings.
	names map[string]string
	// src, when set, is the input as a string (b is its bytes, never
	// written): strings decode to substrings of it, and lists and sets
	// are carved from shared blocks (see Answer).
	src   string
	vslab []abi.Value
	sslab []string
}

// errSyntax marks input that is not JSON; fail replaces it with
// encoding/json's own error for the whole input.
var errSyntax = errors.New("ddbjson: invalid JSON")

// fail turns a decoding error into the error DecodeItem would return for
// the same input: limits as they are; anything else only if the whole
// input is valid JSON (encoding/json checks it before decoding anything),
// otherwise encoding/json's syntax error.
func (d *decoder) fail(err error) error {
	if de, ok := err.(*DecodeError); ok && (de.Kind == TooLarge || de.Kind == TooDeep) {
		return err
	}
	if err != errSyntax && json.Valid(d.b) {
		return err
	}
	var raw json.RawMessage
	if jerr := json.Unmarshal(d.b, &raw); jerr != nil {
		return syntax("", jerr)
	}
	return err // not reached: the input was found invalid
}

var (
	typeString = reflect.TypeFor[string]()
	typeBool   = reflect.TypeFor[bool]()
	typeRaws   = reflect.TypeFor[[]json.RawMessage]()
	typeStrs   = reflect.TypeFor[[]string]()
	typeObject = reflect.TypeFor[map[string]json.RawMessage]()
)

// mismatch is encoding/json's error for a JSON value of the wrong kind,
// which it reports only once the whole input is known to be valid; the
// value is skipped so the caller can go on.
func (d *decoder) mismatch(t reflect.Type) error {
	kind := ""
	switch c := d.peek(); {
	case c == '{':
		kind = "object"
	case c == '[':
		kind = "array"
	case c == '"':
		kind = "string"
	case c == 't' || c == 'f':
		kind = "bool"
	default:
		kind = "number"
	}
	off := d.pos
	if err := d.skip(); err != nil {
		return err
	}
	return &json.UnmarshalTypeError{Value: kind, Type: t, Offset: int64(off)}
}

// item decodes a JSON object of attribute values at level (0: a whole
// item; its values are at level 1). A null is not allowed here (callers
// handle it).
func (d *decoder) item(level int) (abi.Item, error) {
	if d.peek() != '{' {
		return nil, d.wrapMismatch("", d.mismatch(typeObject))
	}
	n := 8 // a map of up to 8 entries is one allocation however it grows
	// Counted first: sized at once, and refused by the limits before any
	// member is built. With names interned, or decoding an answer without
	// limits (src), a nested map is not counted (the count would scan it
	// again for every level above it): it starts at 8 and grows.
	if d.names == nil && (level == 0 || d.src == "" || d.lim != (Limits{})) {
		var err error
		if n, err = d.members(level > 0); err != nil {
			return nil, err
		}
	}
	empty, err := d.open('}')
	if err != nil {
		return nil, err
	}
	out := make(abi.Item, n)
	if empty {
		return out, nil
	}
	// errs holds the errors of members a later duplicate may replace
	// (encoding/json keeps the last of duplicate names).
	var errs []memberErr
	for {
		d.ws()
		if d.peek() != '"' {
			return nil, errSyntax
		}
		k, err := d.name()
		if err != nil {
			return nil, err
		}
		if err := d.colon(); err != nil {
			return nil, err
		}
		var old abi.Value
		dup, bad := false, -1
		if d.lim != (Limits{}) {
			// a duplicate's earlier value counts no more (without limits
			// nothing is counted: the assignment below replaces it)
			old, dup = out[k]
		}
		for i := range errs {
			if errs[i].name == k {
				bad, dup = i, true
			}
		}
		if dup {
			// the earlier value no longer counts
			n := len(k) + valueSize(old)
			if level > 0 {
				n++
				d.vsize -= n
			}
			d.size -= n
		}
		if level == 0 {
			// a name counts in the item's size, not in its value's
			d.attr, d.vsize = k, -len(k)
		}
		if err := d.count(len(k)); err != nil {
			return nil, err
		}
		if level > 0 {
			if err := d.count(1); err != nil {
				return nil, err
			}
		}
		v, err := d.value(level + 1)
		switch {
		case err == nil:
			out[k] = v
			if bad >= 0 {
				errs = append(errs[:bad], errs[bad+1:]...)
			}
		case !recoverable(err):
			return nil, err
		default:
			delete(out, k)
			if de, ok := err.(*DecodeError); ok && level == 0 && de.Attr == "" {
				de.Attr = k // the attribute (or placeholder) whose value is wrong
			}
			if bad >= 0 {
				errs[bad].err = err
			} else {
				errs = append(errs, memberErr{k, err})
			}
		}
		if done, err := d.next('}'); err != nil {
			return nil, err
		} else if done {
			break
		}
	}
	d.jsonD--
	if len(errs) > 0 {
		return nil, errs[0].err
	}
	return out, nil
}

type memberErr struct {
	name string
	err  error
}

// wrapMismatch wraps a type mismatch as DecodeValue does (syntax(t, ...));
// other errors pass.
func (d *decoder) wrapMismatch(t string, err error) error {
	if _, ok := err.(*json.UnmarshalTypeError); ok {
		return syntax(t, err)
	}
	return err
}

// recoverable reports whether decoding can go on after err to find what
// encoding/json would report instead: a later duplicate, several types.
func recoverable(err error) bool {
	de, ok := err.(*DecodeError)
	return ok && de.Kind != TooLarge && de.Kind != TooDeep
}

// value decodes one attribute value at level: a JSON object with one type
// descriptor.
func (d *decoder) value(level int) (abi.Value, error) {
	if d.lim.MaxDepth > 0 && level > d.lim.MaxDepth {
		return abi.Value{}, &DecodeError{Kind: TooDeep, Attr: d.attr}
	}
	switch d.peek() {
	case '{':
	case 'n':
		if err := d.literal("null"); err != nil {
			return abi.Value{}, err
		}
		return abi.Value{}, &DecodeError{Kind: Empty}
	default:
		return abi.Value{}, d.wrapMismatch("", d.mismatch(typeObject))
	}
	if empty, err := d.open('}'); err != nil {
		return abi.Value{}, err
	} else if empty {
		return abi.Value{}, &DecodeError{Kind: Empty}
	}
	var (
		first    string
		seen     bool
		v        abi.Value
		verr     error
		multiple bool
		mark     = d.size
		vmark    = d.vsize
	)
	for {
		d.ws()
		if d.peek() != '"' {
			return abi.Value{}, errSyntax
		}
		t, err := d.descriptor()
		if err != nil {
			return abi.Value{}, err
		}
		if err := d.colon(); err != nil {
			return abi.Value{}, err
		}
		switch {
		case multiple || (seen && t != first):
			multiple = true
			if err := d.skip(); err != nil {
				return abi.Value{}, err
			}
		default:
			// the first descriptor, or a duplicate of it: the last wins
			first, seen = t, true
			d.size, d.vsize = mark, vmark
			vstart, vdepth := d.pos, d.jsonD
			v, verr = d.typed(t, level)
			if verr != nil {
				if !recoverable(verr) {
					return abi.Value{}, verr
				}
				// go on past the value: a duplicate or a second type
				// may change what is reported
				d.pos, d.jsonD = vstart, vdepth
				d.size, d.vsize = mark, vmark
				if err := d.skip(); err != nil {
					return abi.Value{}, err
				}
			}
		}
		if done, err := d.next('}'); err != nil {
			return abi.Value{}, err
		} else if done {
			break
		}
	}
	d.jsonD--
	if multiple {
		return abi.Value{}, &DecodeError{Kind: MultipleTypes}
	}
	return v, verr
}

// descriptor reads a type descriptor key, without allocating for the
// ten that exist.
func (d *decoder) descriptor() (string, error) {
	start := d.pos + 1
	for i := start; i < len(d.b) && i <= start+4; i++ {
		if c := d.b[i]; c == '\\' || c >= 0x80 || c < 0x20 {
			break
		} else if c != '"' {
			continue
		}
		if t := knownType(d.b[start:i]); t != "" {
			d.pos = i + 1
			return t, nil
		}
		break
	}
	return d.str()
}

func knownType(b []byte) string {
	switch string(b) {
	case "S":
		return "S"
	case "N":
		return "N"
	case "B":
		return "B"
	case "BOOL":
		return "BOOL"
	case "NULL":
		return "NULL"
	case "M":
		return "M"
	case "L":
		return "L"
	case "SS":
		return "SS"
	case "NS":
		return "NS"
	case "BS":
		return "BS"
	}
	return ""
}

// typed decodes the value of type descriptor t.
func (d *decoder) typed(t string, level int) (abi.Value, error) {
	switch t {
	case "S", "N":
		s, err := d.strOrNull(typeString)
		if err != nil {
			return abi.Value{}, d.wrapMismatch(t, err)
		}
		if t == "S" {
			return abi.S(s), d.count(len(s))
		}
		n := 0
		if s != "" {
			n = 1
		}
		return abi.N(s), d.count(n)
	case "B":
		b, err := d.blob()
		if err != nil {
			return abi.Value{}, err
		}
		return abi.B(b), d.count(len(b))
	case "BOOL", "NULL":
		x, err := d.boolOrNull()
		if err != nil {
			return abi.Value{}, d.wrapMismatch(t, err)
		}
		if err := d.count(1); err != nil {
			return abi.Value{}, err
		}
		if t == "BOOL" {
			return abi.Bool(x), nil
		}
		if !x {
			return abi.Value{}, &DecodeError{Kind: NullFalse, Type: t}
		}
		return abi.Null(), nil
	case "M":
		if err := d.count(3); err != nil {
			return abi.Value{}, err
		}
		if d.peek() == 'n' {
			if err := d.literal("null"); err != nil {
				return abi.Value{}, err
			}
			return abi.M(abi.Item{}), nil
		}
		it, err := d.item(level)
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(it), nil
	case "L":
		return d.list(level)
	case "SS", "NS":
		return d.strs(t)
	case "BS":
		return d.blobs()
	}
	if err := d.skip(); err != nil {
		return abi.Value{}, err
	}
	return abi.Value{}, &DecodeError{Kind: UnknownType, Type: t}
}

func (d *decoder) list(level int) (abi.Value, error) {
	if err := d.count(3); err != nil {
		return abi.Value{}, err
	}
	var l []abi.Value
	err := d.array("L", typeRaws, true, func(n int) { l = d.values(n) }, func() error {
		if err := d.count(1); err != nil {
			return err
		}
		v, err := d.value(level + 1)
		if err != nil {
			return err
		}
		l = append(l, v)
		return nil
	})
	if err != nil {
		return abi.Value{}, err
	}
	if l == nil {
		return abi.L(), nil
	}
	return abi.Value{Kind: abi.KindL, List: l}, nil
}

// strs decodes an SS or NS: a JSON array of strings (null members are "").
func (d *decoder) strs(t string) (abi.Value, error) {
	kind := abi.KindSS
	if t == "NS" {
		kind = abi.KindNS
	}
	var ss []string
	err := d.array(t, typeStrs, false, func(n int) { ss = d.strings(n) }, func() error {
		s, err := d.strOrNull(typeString)
		if err != nil {
			return d.wrapMismatch(t, err)
		}
		n := len(s)
		if kind == abi.KindNS && n > 0 {
			n = 1
		}
		if err := d.count(n); err != nil {
			return err
		}
		ss = append(ss, s)
		return nil
	})
	if err != nil {
		return abi.Value{}, err
	}
	if ss == nil {
		ss = []string{}
	}
	return abi.Value{Kind: kind, Strs: ss}, nil
}

// blobs decodes a BS: a JSON array of base64 strings.
func (d *decoder) blobs() (abi.Value, error) {
	var bs [][]byte
	err := d.array("BS", typeRaws, false, func(n int) { bs = make([][]byte, 0, n) }, func() error {
		b, err := d.blob()
		if err != nil {
			return err
		}
		if err := d.count(len(b)); err != nil {
			return err
		}
		bs = append(bs, b)
		return nil
	})
	if err != nil {
		return abi.Value{}, err
	}
	if bs == nil {
		bs = [][]byte{}
	}
	return abi.Value{Kind: abi.KindBS, Blobs: bs}, nil
}

// array walks the JSON array of a list or set of type t (null: no
// members): it counts the members first (values: they are attribute
// values, see members; start gets the count, for a slice's capacity, and
// is not called for null), then calls member at each one, the decoder on
// its first byte.
func (d *decoder) array(t string, goType reflect.Type, values bool, start func(n int), member func() error) error {
	switch d.peek() {
	case '[':
	case 'n':
		return d.literal("null")
	default:
		return d.wrapMismatch(t, d.mismatch(goType))
	}
	n, err := d.members(values)
	if err != nil {
		return err
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	start(n)
	if empty {
		return nil
	}
	for {
		d.ws()
		if err := member(); err != nil {
			return err
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			d.jsonD--
			return nil
		}
	}
}

// blob decodes a base64 string (null: empty).
func (d *decoder) blob() ([]byte, error) {
	s, err := d.strOrNull(typeString)
	if err != nil {
		return nil, d.wrapMismatch("B", err)
	}
	enc := base64.StdEncoding
	if d.lim.StrictBase64 {
		enc = enc.Strict()
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, syntax("B", fmt.Errorf("not valid base64: %w", err))
	}
	return b, nil
}

// strOrNull decodes a JSON string, or null as "" (encoding/json leaves a
// string unset for null); anything else is a type mismatch with t.
func (d *decoder) strOrNull(t reflect.Type) (string, error) {
	switch d.peek() {
	case '"':
		return d.str()
	case 'n':
		return "", d.literal("null")
	}
	return "", d.mismatch(t)
}

func (d *decoder) boolOrNull() (bool, error) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.mismatch(typeBool)
}

// slabMax is the largest block lists and sets are carved from.
const slabMax = 256

// values returns an empty slice with room for n values: carved from a
// shared block when decoding from src (its capacity n, so an append
// elsewhere never writes into a neighbour), else made for it.
func (d *decoder) values(n int) []abi.Value {
	if d.src == "" || n > slabMax/4 {
		return make([]abi.Value, 0, n)
	}
	if cap(d.vslab)-len(d.vslab) < n {
		d.vslab = make([]abi.Value, 0, d.slab(cap(d.vslab), 128))
	}
	l := len(d.vslab)
	d.vslab = d.vslab[:l+n]
	return d.vslab[l : l : l+n]
}

// strings is values for a set's strings.
func (d *decoder) strings(n int) []string {
	if d.src == "" || n > slabMax/4 {
		return make([]string, 0, n)
	}
	if cap(d.sslab)-len(d.sslab) < n {
		d.sslab = make([]string, 0, d.slab(cap(d.sslab), 64))
	}
	l := len(d.sslab)
	d.sslab = d.sslab[:l+n]
	return d.sslab[l : l : l+n]
}

// slab is the size of the next block after one of size last: the first
// one from the input's size (a list member takes at least perByte bytes
// of it in common answers), then twice the last, within [16, slabMax].
func (d *decoder) slab(last, perByte int) int {
	if last == 0 {
		last = len(d.b) / perByte / 2
	}
	return min(slabMax, max(16, 2*last))
}
