package ddbjson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/dynafold/dynafold/abi"
)

// Limits bounds what DecodeItemLimits builds, so that a hostile input is
// refused after building about as much as the limit allows, not after
// building all of it. A zero field means no limit.
type Limits struct {
	// MaxItemSize is the largest size of the whole item, by DynamoDB's
	// rules (see expr.ItemSize in ddblocal): attribute names, values, 3
	// bytes per list or map and 1 per element. While decoding, a number
	// counts 1 byte (its true size needs it parsed), so an item refused is
	// surely over the limit, and an item accepted can still be over it by
	// its numbers' share.
	MaxItemSize int
	// MaxValueSize is the largest size of each attribute's value, counted
	// the same way.
	MaxValueSize int
	// MaxDepth is the deepest nesting of values: an attribute's value is
	// at level 1, an element of a list or map one level below its parent.
	MaxDepth int
}

// maxJSONDepth is encoding/json's own nesting limit; deeper input is a
// syntax error there, and so here.
const maxJSONDepth = 10000

// DecodeItemLimits decodes a JSON object of attribute values as DecodeItem
// does, and stops with a TooLarge or TooDeep *DecodeError as soon as the
// item passes one of lim's limits (Attr names the attribute). Other errors
// are DecodeItem's, for the same input.
func DecodeItemLimits(b []byte, lim Limits) (abi.Item, error) {
	d := &decoder{b: b, lim: lim}
	d.ws()
	if d.pos < len(d.b) && d.b[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, d.fail(err)
		}
		if err := d.end(); err != nil {
			return nil, d.fail(err)
		}
		return abi.Item{}, nil
	}
	it, err := d.item(0)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, d.fail(err)
	}
	return it, nil
}

// DecodeValueLimits decodes one attribute value as DecodeValue does, with
// lim's MaxValueSize and MaxDepth.
func DecodeValueLimits(b []byte, lim Limits) (abi.Value, error) {
	d := &decoder{b: b, lim: lim}
	d.ws()
	v, err := d.value(1)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return abi.Value{}, d.fail(err)
	}
	return v, nil
}

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

func (d *decoder) end() error {
	d.ws()
	if d.pos != len(d.b) {
		return errSyntax
	}
	return nil
}

func (d *decoder) ws() {
	for d.pos < len(d.b) {
		switch d.b[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// count adds n to the running sizes and checks the limits.
func (d *decoder) count(n int) error {
	d.size += n
	d.vsize += n
	if d.lim.MaxItemSize > 0 && d.size > d.lim.MaxItemSize {
		return &DecodeError{Kind: TooLarge, Attr: d.attr}
	}
	if d.lim.MaxValueSize > 0 && d.vsize > d.lim.MaxValueSize {
		return &DecodeError{Kind: TooLarge, Attr: d.attr}
	}
	return nil
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

func (d *decoder) peek() byte {
	if d.pos < len(d.b) {
		return d.b[d.pos]
	}
	return 0
}

// item decodes a JSON object of attribute values at level (0: a whole
// item; its values are at level 1). A null is not allowed here (callers
// handle it).
func (d *decoder) item(level int) (abi.Item, error) {
	if d.peek() != '{' {
		return nil, d.wrapMismatch("", d.mismatch(typeObject))
	}
	n, err := d.members(level > 0)
	if err != nil {
		return nil, err
	}
	if err := d.push(); err != nil {
		return nil, err
	}
	d.pos++
	out := make(abi.Item, n)
	// errs holds the errors of members a later duplicate may replace
	// (encoding/json keeps the last of duplicate names).
	var errs []memberErr
	d.ws()
	if d.peek() == '}' {
		d.pos++
		d.jsonD--
		return out, nil
	}
	for {
		d.ws()
		if d.peek() != '"' {
			return nil, errSyntax
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if err := d.colon(); err != nil {
			return nil, err
		}
		old, dup := out[k]
		bad := -1
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
			if bad >= 0 {
				errs[bad].err = err
			} else {
				errs = append(errs, memberErr{k, err})
			}
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return nil, errSyntax
		}
		break
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

// members counts the members of the array or object at pos, without
// checking its syntax (decoding does). Every member of a list or map
// (nested) takes at least its own byte, so with limits one with more
// members than the item has bytes left is too large, which members
// reports before anything is built.
func (d *decoder) members(nested bool) (int, error) {
	room := -1
	if !nested {
		// members of sets and items can be empty
	} else if d.lim.MaxItemSize > 0 {
		room = d.lim.MaxItemSize - d.size
	}
	if nested && d.lim.MaxValueSize > 0 && (room < 0 || d.lim.MaxValueSize-d.vsize < room) {
		room = d.lim.MaxValueSize - d.vsize
	}
	n, depth, content := 0, 0, false
	b := d.b
	for i := d.pos; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			content = content || depth == 1
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			content = content || depth == 1
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				if content {
					n++
				}
				if room >= 0 && n > room {
					return 0, &DecodeError{Kind: TooLarge, Attr: d.attr}
				}
				return n, nil
			}
		case ',':
			if depth == 1 {
				n++
				if room >= 0 && n > room {
					return 0, &DecodeError{Kind: TooLarge, Attr: d.attr}
				}
			}
		case ' ', '\t', '\n', '\r':
		default:
			content = content || depth == 1
		}
	}
	return n, nil // not JSON: decoding finds out where
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

func (d *decoder) push() error {
	d.jsonD++
	if d.jsonD > maxJSONDepth {
		return errSyntax
	}
	return nil
}

func (d *decoder) colon() error {
	d.ws()
	if d.peek() != ':' {
		return errSyntax
	}
	d.pos++
	d.ws()
	return nil
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
	if err := d.push(); err != nil {
		return abi.Value{}, err
	}
	d.pos++
	d.ws()
	if d.peek() == '}' {
		d.pos++
		d.jsonD--
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
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return abi.Value{}, errSyntax
		}
		break
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
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return abi.Value{}, err
		}
		return abi.L(), nil
	default:
		return abi.Value{}, d.wrapMismatch("L", d.mismatch(typeRaws))
	}
	n, err := d.members(true)
	if err != nil {
		return abi.Value{}, err
	}
	if err := d.push(); err != nil {
		return abi.Value{}, err
	}
	d.pos++
	l := make([]abi.Value, 0, n)
	d.ws()
	if d.peek() == ']' {
		d.pos++
		d.jsonD--
		return abi.Value{Kind: abi.KindL, List: l}, nil
	}
	for {
		d.ws()
		if err := d.count(1); err != nil {
			return abi.Value{}, err
		}
		v, err := d.value(level + 1)
		if err != nil {
			return abi.Value{}, err
		}
		l = append(l, v)
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case ']':
			d.pos++
		default:
			return abi.Value{}, errSyntax
		}
		break
	}
	d.jsonD--
	return abi.Value{Kind: abi.KindL, List: l}, nil
}

// strs decodes an SS or NS: a JSON array of strings (null members are "").
func (d *decoder) strs(t string) (abi.Value, error) {
	kind := abi.KindSS
	if t == "NS" {
		kind = abi.KindNS
	}
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return abi.Value{}, err
		}
		return abi.Value{Kind: kind, Strs: []string{}}, nil
	default:
		return abi.Value{}, d.wrapMismatch(t, d.mismatch(typeStrs))
	}
	n, err := d.members(false)
	if err != nil {
		return abi.Value{}, err
	}
	if err := d.push(); err != nil {
		return abi.Value{}, err
	}
	d.pos++
	ss := make([]string, 0, n)
	d.ws()
	if d.peek() != ']' {
		for {
			d.ws()
			s, err := d.strOrNull(typeString)
			if err != nil {
				return abi.Value{}, d.wrapMismatch(t, err)
			}
			n := len(s)
			if kind == abi.KindNS && n > 0 {
				n = 1
			}
			if err := d.count(n); err != nil {
				return abi.Value{}, err
			}
			ss = append(ss, s)
			d.ws()
			if d.peek() == ',' {
				d.pos++
				continue
			}
			if d.peek() != ']' {
				return abi.Value{}, errSyntax
			}
			break
		}
	}
	d.pos++
	d.jsonD--
	return abi.Value{Kind: kind, Strs: ss}, nil
}

// blobs decodes a BS: a JSON array of base64 strings.
func (d *decoder) blobs() (abi.Value, error) {
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return abi.Value{}, err
		}
		return abi.Value{Kind: abi.KindBS, Blobs: [][]byte{}}, nil
	default:
		return abi.Value{}, d.wrapMismatch("BS", d.mismatch(typeRaws))
	}
	n, err := d.members(false)
	if err != nil {
		return abi.Value{}, err
	}
	if err := d.push(); err != nil {
		return abi.Value{}, err
	}
	d.pos++
	bs := make([][]byte, 0, n)
	d.ws()
	if d.peek() != ']' {
		for {
			d.ws()
			b, err := d.blob()
			if err != nil {
				return abi.Value{}, err
			}
			if err := d.count(len(b)); err != nil {
				return abi.Value{}, err
			}
			bs = append(bs, b)
			d.ws()
			if d.peek() == ',' {
				d.pos++
				continue
			}
			if d.peek() != ']' {
				return abi.Value{}, errSyntax
			}
			break
		}
	}
	d.pos++
	d.jsonD--
	return abi.Value{Kind: abi.KindBS, Blobs: bs}, nil
}

// blob decodes a base64 string (null: empty).
func (d *decoder) blob() ([]byte, error) {
	s, err := d.strOrNull(typeString)
	if err != nil {
		return nil, d.wrapMismatch("B", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
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

func (d *decoder) literal(lit string) error {
	if len(d.b)-d.pos < len(lit) || string(d.b[d.pos:d.pos+len(lit)]) != lit {
		return errSyntax
	}
	d.pos += len(lit)
	return nil
}

// str decodes the JSON string at pos as encoding/json does: escapes
// resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD.
func (d *decoder) str() (string, error) {
	start := d.pos + 1
	plain := true // no escape and valid ASCII so far
	i := start
	for ; i < len(d.b); i++ {
		c := d.b[i]
		switch {
		case c == '"':
			span := d.b[start:i]
			d.pos = i + 1
			if plain || utf8.Valid(span) {
				return string(span), nil
			}
			return d.slowStr(start-1, i+1)
		case c == '\\':
			end, ok := d.strEnd(i)
			if !ok {
				return "", errSyntax
			}
			d.pos = end
			return d.slowStr(start-1, end)
		case c < 0x20:
			return "", errSyntax
		case c >= 0x80:
			plain = false
		}
	}
	return "", errSyntax
}

// strEnd returns the offset just past the closing quote of the string
// whose first backslash is at i.
func (d *decoder) strEnd(i int) (int, bool) {
	for ; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i >= len(d.b) {
				return 0, false
			}
			switch d.b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d.b) {
					return 0, false
				}
				for _, h := range d.b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// slowStr decodes the quoted string b[from:to] with encoding/json (escapes
// or non-UTF-8 bytes: rare in DynamoDB JSON).
func (d *decoder) slowStr(from, to int) (string, error) {
	var s string
	if err := json.Unmarshal(d.b[from:to], &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

// skip passes over one JSON value, checking its syntax.
func (d *decoder) skip() error {
	d.ws()
	switch c := d.peek(); {
	case c == '{':
		if err := d.push(); err != nil {
			return err
		}
		d.pos++
		d.ws()
		if d.peek() == '}' {
			d.pos++
			d.jsonD--
			return nil
		}
		for {
			d.ws()
			if d.peek() != '"' {
				return errSyntax
			}
			if err := d.skipStr(); err != nil {
				return err
			}
			if err := d.colon(); err != nil {
				return err
			}
			if err := d.skip(); err != nil {
				return err
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.pos++
				continue
			case '}':
				d.pos++
				d.jsonD--
				return nil
			}
			return errSyntax
		}
	case c == '[':
		if err := d.push(); err != nil {
			return err
		}
		d.pos++
		d.ws()
		if d.peek() == ']' {
			d.pos++
			d.jsonD--
			return nil
		}
		for {
			if err := d.skip(); err != nil {
				return err
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.pos++
				continue
			case ']':
				d.pos++
				d.jsonD--
				return nil
			}
			return errSyntax
		}
	case c == '"':
		return d.skipStr()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return errSyntax
}

func (d *decoder) skipStr() error {
	for i := d.pos + 1; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c == '\\':
			end, ok := d.strEnd(i)
			if !ok {
				return errSyntax
			}
			d.pos = end
			return nil
		case c < 0x20:
			return errSyntax
		}
	}
	return errSyntax
}

// number passes over a JSON number.
func (d *decoder) number() error {
	i := d.pos
	if i < len(d.b) && d.b[i] == '-' {
		i++
	}
	switch {
	case i < len(d.b) && d.b[i] == '0':
		i++
	case i < len(d.b) && d.b[i] >= '1' && d.b[i] <= '9':
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
	default:
		return errSyntax
	}
	if i < len(d.b) && d.b[i] == '.' {
		i++
		if i >= len(d.b) || d.b[i] < '0' || d.b[i] > '9' {
			return errSyntax
		}
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
	}
	if i < len(d.b) && (d.b[i] == 'e' || d.b[i] == 'E') {
		i++
		if i < len(d.b) && (d.b[i] == '+' || d.b[i] == '-') {
			i++
		}
		if i >= len(d.b) || d.b[i] < '0' || d.b[i] > '9' {
			return errSyntax
		}
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return nil
}

// valueSize is a value's size as the decoder counts it (numbers 1 byte).
func valueSize(v abi.Value) int {
	switch v.Kind {
	case abi.KindS:
		return len(v.Str)
	case abi.KindN:
		if v.Str == "" {
			return 0
		}
		return 1
	case abi.KindB:
		return len(v.Bytes)
	case abi.KindBOOL, abi.KindNULL:
		return 1
	case abi.KindSS:
		n := 0
		for _, s := range v.Strs {
			n += len(s)
		}
		return n
	case abi.KindNS:
		n := 0
		for _, s := range v.Strs {
			if s != "" {
				n++
			}
		}
		return n
	case abi.KindBS:
		n := 0
		for _, b := range v.Blobs {
			n += len(b)
		}
		return n
	case abi.KindL:
		n := 3
		for _, e := range v.List {
			n += 1 + valueSize(e)
		}
		return n
	case abi.KindM:
		n := 3
		for k, e := range v.Map {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}
