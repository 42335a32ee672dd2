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
// value once. A list's or a set's first members decode into a buffer on
// the stack and are copied into a slice of their number at the end, and a
// map starts as one group of 8 entries: a container that small is read
// once. Only a longer one counts the rest of its members when it passes
// that size (rest: a scan that allocates nothing), so every slice and map
// is still made at its final size, and one with more members than the
// limits leave room for is refused before they are built; below that
// size, the running counts refuse it as soon as it passes a limit.
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
	vused int // values carved from vslab's blocks so far
	// nameBuf is the block the names of a decoder without src are
	// copied into (see keep); never written below its length.
	nameBuf []byte
	sused   int // strings carved from sslab's blocks so far
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

// smallMap is the most members a map made with no count holds in its
// first allocation (a Go map of up to 8 entries is one group); a map with
// more has the rest of its members counted (see rest) and is made again
// at its size.
const smallMap = 8

// smallList is the most members of a list decoded into a buffer on the
// stack before the rest of the list is counted (see rest): a list of up
// to smallList members is decoded without a scan ahead, then copied into
// a slice of its size. smallSet is the same for a set's strings.
const (
	smallList = 8
	smallSet  = 16
)

// item decodes a JSON object of attribute values at level (0: a whole
// item; its values are at level 1). A null is not allowed here (callers
// handle it).
func (d *decoder) item(level int) (abi.Item, error) {
	if d.peek() != '{' {
		return nil, d.wrapMismatch("", d.mismatch(typeObject))
	}
	empty, err := d.open('}')
	if err != nil {
		return nil, err
	}
	if empty {
		return abi.Item{}, nil
	}
	out := make(abi.Item, smallMap)
	limited := d.lim != (Limits{})
	// errs holds the errors of members a later duplicate may replace
	// (encoding/json keeps the last of duplicate names).
	var errs []memberErr
	for members := 1; ; members++ {
		d.ws()
		if d.peek() != '"' {
			return nil, errSyntax
		}
		if members == smallMap+1 {
			// more than a small map holds: the rest counted (and refused
			// by the limits before any of it is built), the map made
			// again at its size
			n, err := d.rest(level > 0)
			if err != nil {
				return nil, err
			}
			big := make(abi.Item, len(out)+n)
			for k, v := range out {
				big[k] = v
			}
			out = big
		}
		k, err := d.name()
		if err != nil {
			return nil, err
		}
		if err := d.colon(); err != nil {
			return nil, err
		}
		dup, bad := false, -1
		oldSize := 0
		if limited {
			// a duplicate's earlier value counts no more (without limits
			// nothing is counted: the assignment below replaces it)
			var old abi.Value
			if old, dup = out[k]; dup {
				oldSize = valueSize(old)
			}
		}
		for i := range errs {
			if errs[i].name == k {
				bad, dup = i, true
			}
		}
		if dup {
			// the earlier value no longer counts
			n := len(k) + oldSize
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
		var v abi.Value
		switch err := d.value(level+1, &v); {
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

// value decodes one attribute value at level, a JSON object with one type
// descriptor, into *dst (which holds no value of use when it returns an
// error).
func (d *decoder) value(level int, dst *abi.Value) error {
	if d.lim.MaxDepth > 0 && level > d.lim.MaxDepth {
		return &DecodeError{Kind: TooDeep, Attr: d.attr}
	}
	if ok, err := d.scalar(dst); ok {
		return err
	}
	switch d.peek() {
	case '{':
	case 'n':
		if err := d.literal("null"); err != nil {
			return err
		}
		return &DecodeError{Kind: Empty}
	default:
		return d.wrapMismatch("", d.mismatch(typeObject))
	}
	if empty, err := d.open('}'); err != nil {
		return err
	} else if empty {
		return &DecodeError{Kind: Empty}
	}
	var (
		first    string
		seen     bool
		verr     error
		multiple bool
		mark     = d.size
		vmark    = d.vsize
	)
	for {
		d.ws()
		if d.peek() != '"' {
			return errSyntax
		}
		code, t, err := d.descriptor()
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		switch {
		case multiple || (seen && t != first):
			multiple = true
			if err := d.skip(); err != nil {
				return err
			}
		default:
			// the first descriptor, or a duplicate of it: the last wins
			first, seen = t, true
			d.size, d.vsize = mark, vmark
			vstart, vdepth := d.pos, d.jsonD
			verr = d.typed(code, t, level, dst)
			if verr != nil {
				if !recoverable(verr) {
					return verr
				}
				// go on past the value: a duplicate or a second type
				// may change what is reported
				d.pos, d.jsonD = vstart, vdepth
				d.size, d.vsize = mark, vmark
				if err := d.skip(); err != nil {
					return err
				}
			}
		}
		if done, err := d.next('}'); err != nil {
			return err
		} else if done {
			break
		}
	}
	d.jsonD--
	if multiple {
		return &DecodeError{Kind: MultipleTypes}
	}
	return verr
}

// scalar decodes the value at pos into *dst when it is an S or an N in
// compact JSON with no escape or non-ASCII byte, {"S":"text"} (most
// values are), as the rest of value would: ok reports that it did (err is
// then count's); otherwise nothing is read.
func (d *decoder) scalar(dst *abi.Value) (ok bool, err error) {
	b, p := d.b, d.pos
	if p+5 >= len(b) || b[p] != '{' || b[p+1] != '"' || b[p+3] != '"' || b[p+4] != ':' || b[p+5] != '"' || d.jsonD >= maxJSONDepth {
		return false, nil
	}
	t := b[p+2]
	if t != 'S' && t != 'N' {
		return false, nil
	}
	i := p + 6
	for i < len(b) && plainByte[b[i]] {
		i++
	}
	if i+1 >= len(b) || b[i] != '"' || b[i+1] != '}' {
		return false, nil
	}
	var s string
	if d.src != "" {
		s = d.src[p+6 : i]
	} else {
		s = string(b[p+6 : i])
	}
	d.pos = i + 2
	if t == 'S' {
		*dst = abi.Value{Kind: abi.KindS, Str: s}
		return true, d.count(len(s))
	}
	*dst = abi.Value{Kind: abi.KindN, Str: s}
	if s == "" {
		return true, nil
	}
	return true, d.count(1)
}

// The type descriptors, as descriptor reads them.
const (
	tUnknown = iota
	tS
	tN
	tB
	tBOOL
	tNULL
	tM
	tL
	tSS
	tNS
	tBS
)

// descriptor reads a type descriptor key: its code and its text, without
// allocating for the ten that exist (told apart by length and bytes).
func (d *decoder) descriptor() (int, string, error) {
	b, p := d.b, d.pos+1
	switch {
	case p+1 < len(b) && b[p+1] == '"':
		d.pos = p + 2
		switch b[p] {
		case 'S':
			return tS, "S", nil
		case 'N':
			return tN, "N", nil
		case 'M':
			return tM, "M", nil
		case 'L':
			return tL, "L", nil
		case 'B':
			return tB, "B", nil
		}
		d.pos = p - 1
	case p+2 < len(b) && b[p+2] == '"' && b[p+1] == 'S':
		d.pos = p + 3
		switch b[p] {
		case 'S':
			return tSS, "SS", nil
		case 'N':
			return tNS, "NS", nil
		case 'B':
			return tBS, "BS", nil
		}
		d.pos = p - 1
	case p+4 < len(b) && b[p+4] == '"':
		switch string(b[p : p+4]) {
		case "BOOL":
			d.pos = p + 5
			return tBOOL, "BOOL", nil
		case "NULL":
			d.pos = p + 5
			return tNULL, "NULL", nil
		}
	}
	s, err := d.str()
	return codeOf(s), s, err
}

// codeOf is the code of descriptor t (one read with escapes).
func codeOf(t string) int {
	switch t {
	case "S":
		return tS
	case "N":
		return tN
	case "B":
		return tB
	case "BOOL":
		return tBOOL
	case "NULL":
		return tNULL
	case "M":
		return tM
	case "L":
		return tL
	case "SS":
		return tSS
	case "NS":
		return tNS
	case "BS":
		return tBS
	}
	return tUnknown
}

// typed decodes the value of type descriptor t (code its code) into
// *dst.
func (d *decoder) typed(code int, t string, level int, dst *abi.Value) error {
	switch code {
	case tS, tN:
		s, err := d.strOrNull(typeString)
		if err != nil {
			return d.wrapMismatch(t, err)
		}
		if code == tS {
			*dst = abi.Value{Kind: abi.KindS, Str: s}
			return d.count(len(s))
		}
		*dst = abi.Value{Kind: abi.KindN, Str: s}
		if s == "" {
			return nil
		}
		return d.count(1)
	case tB:
		b, err := d.blob()
		if err != nil {
			return err
		}
		*dst = abi.Value{Kind: abi.KindB, Bytes: b}
		return d.count(len(b))
	case tBOOL, tNULL:
		x, err := d.boolOrNull()
		if err != nil {
			return d.wrapMismatch(t, err)
		}
		if err := d.count(1); err != nil {
			return err
		}
		if code == tBOOL {
			*dst = abi.Value{Kind: abi.KindBOOL, Bool: x}
			return nil
		}
		if !x {
			return &DecodeError{Kind: NullFalse, Type: t}
		}
		*dst = abi.Value{Kind: abi.KindNULL}
		return nil
	case tM:
		if err := d.count(3); err != nil {
			return err
		}
		if d.peek() == 'n' {
			if err := d.literal("null"); err != nil {
				return err
			}
			*dst = abi.Value{Kind: abi.KindM, Map: abi.Item{}}
			return nil
		}
		it, err := d.item(level)
		if err != nil {
			return err
		}
		*dst = abi.Value{Kind: abi.KindM, Map: it}
		return nil
	case tL:
		return d.list(level, dst)
	case tSS, tNS:
		return d.strs(code, t, dst)
	case tBS:
		return d.blobs(dst)
	}
	if err := d.skip(); err != nil {
		return err
	}
	return &DecodeError{Kind: UnknownType, Type: t}
}

// list decodes an L into *dst: up to smallList members into a buffer on
// the stack, then, for a longer list, the rest counted and decoded in
// place into a slice of the list's size.
func (d *decoder) list(level int, dst *abi.Value) error {
	if err := d.count(3); err != nil {
		return err
	}
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return err
		}
		*dst = abi.Value{Kind: abi.KindL, List: []abi.Value{}}
		return nil
	default:
		return d.wrapMismatch("L", d.mismatch(typeRaws))
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	if empty {
		*dst = abi.Value{Kind: abi.KindL, List: []abi.Value{}}
		return nil
	}
	var (
		buf [smallList]abi.Value
		n   int         // members in buf
		l   []abi.Value // the list, once longer than buf
	)
	for {
		d.ws()
		if n == smallList && l == nil {
			// longer than buf: the rest counted (and refused by the
			// limits before any of it is built), the list made at its
			// size
			rest, err := d.rest(true)
			if err != nil {
				return err
			}
			l = append(d.values(n+rest), buf[:n]...)
		}
		if err := d.count(1); err != nil {
			return err
		}
		var v *abi.Value
		switch {
		case l == nil:
			v = &buf[n]
			n++
		case len(l) < cap(l):
			l = l[:len(l)+1]
			v = &l[len(l)-1]
		default: // miscounted: not JSON, which decoding finds out
			l = append(l, abi.Value{})
			v = &l[len(l)-1]
		}
		if err := d.value(level+1, v); err != nil {
			return err
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			break
		}
	}
	d.jsonD--
	if l == nil {
		l = append(d.values(n), buf[:n]...)
	}
	*dst = abi.Value{Kind: abi.KindL, List: l}
	return nil
}

// strs decodes an SS or NS (code tSS or tNS, descriptor t) into *dst: a
// JSON array of strings (null members are ""), decoded as list decodes
// its members.
func (d *decoder) strs(code int, t string, dst *abi.Value) error {
	kind := abi.KindSS
	if code == tNS {
		kind = abi.KindNS
	}
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return err
		}
		*dst = abi.Value{Kind: kind, Strs: []string{}}
		return nil
	default:
		return d.wrapMismatch(t, d.mismatch(typeStrs))
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	if empty {
		*dst = abi.Value{Kind: kind, Strs: []string{}}
		return nil
	}
	var (
		buf [smallSet]string
		n   int
		ss  []string
	)
	for {
		d.ws()
		if n == smallSet && ss == nil {
			rest, err := d.rest(false)
			if err != nil {
				return err
			}
			ss = append(d.strings(n+rest), buf[:n]...)
		}
		s, err := d.strOrNull(typeString)
		if err != nil {
			return d.wrapMismatch(t, err)
		}
		size := len(s)
		if kind == abi.KindNS && size > 0 {
			size = 1
		}
		if err := d.count(size); err != nil {
			return err
		}
		if ss != nil {
			ss = append(ss, s)
		} else {
			buf[n] = s
			n++
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			break
		}
	}
	d.jsonD--
	if ss == nil {
		ss = append(d.strings(n), buf[:n]...)
	}
	*dst = abi.Value{Kind: kind, Strs: ss}
	return nil
}

// blobs decodes a BS into *dst: a JSON array of base64 strings (rare: its
// members are counted first).
func (d *decoder) blobs(dst *abi.Value) error {
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
		return err
	}
	if bs == nil {
		bs = [][]byte{}
	}
	*dst = abi.Value{Kind: abi.KindBS, Blobs: bs}
	return nil
}

// array walks the JSON array of a BS (null: no members): it counts the
// members first (start gets the count, for a slice's capacity, and is
// not called for null), then calls member at each one, the decoder on
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
		d.vslab = make([]abi.Value, 0, d.slab(d.vused, n, 128))
	}
	d.vused += n
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
		d.sslab = make([]string, 0, d.slab(d.sused, n, 64))
	}
	d.sused += n
	l := len(d.sslab)
	d.sslab = d.sslab[:l+n]
	return d.sslab[l : l : l+n]
}

// slab is the size of the next block, for n members now and used carved
// so far: the first one from the input's size (a list member takes at
// least perByte bytes of it in common answers), the next ones from the
// rest of the input at the rate of the part read, within [16, slabMax].
func (d *decoder) slab(used, n, perByte int) int {
	est := len(d.b) / perByte
	if used > 0 {
		est = n + (len(d.b)-d.pos)*used/max(1, d.pos)
	}
	return min(slabMax, max(16, n, est))
}
