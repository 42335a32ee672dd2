package ddbjson

import (
	"encoding/json"
	"errors"
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
	jsonD int32 // JSON nesting depth
	// wide marks the levels (bit level%32) whose last map decoded had
	// more members than a small map holds. The items of one answer, and
	// the maps of one list, mostly have one shape, so the next map at
	// that level has its members counted before it is made (each map
	// still of its own size) instead of filling a small map first and
	// making it again.
	wide uint32
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
	// from is where the decoded text starts in b (DecodeItemAt: an item
	// within a request); the first block of names is sized from it on.
	from int
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
	if err != errSyntax && Valid(d.b) {
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
	var out abi.Item
	// counted: the map made at its size at once (a map after a wide one
	// at its level, see decoder.wide)
	counted := false
	limited := d.lim != (Limits{})
	// errs holds the errors of members a later duplicate may replace
	// (encoding/json keeps the last of duplicate names).
	var errs []memberErr
	for members := 1; ; members++ {
		d.ws()
		if d.peek() != '"' {
			return nil, errSyntax
		}
		if members == 1 {
			n := smallMap
			if d.wide&(1<<(level%32)) != 0 && (level == 0 || !limited) {
				// the map before at this level had more members than a
				// small map holds: this one's counted first, so a wide
				// map is not made twice. Not a nested map's under limits:
				// its count could refuse it before an error of its first
				// members that decoding reports first (a whole item's
				// count refuses nothing)
				if n, err = d.rest(level > 0); err != nil {
					return nil, err
				}
				counted = true
			}
			out = make(abi.Item, n)
		}
		if members == smallMap+1 && !counted {
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
	if bit := uint32(1) << (level % 32); len(out) > smallMap {
		d.wide |= bit
	} else {
		d.wide &^= bit
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
