package ddbjson

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// The decoder's lexical side: whitespace, strings, literals, numbers,
// skipping a value, and counting a container's members.

// end checks that nothing but whitespace follows the decoded value.
func (d *decoder) end() error {
	d.ws()
	if d.pos != len(d.b) {
		return errSyntax
	}
	return nil
}

// ws passes over whitespace; a byte above ' ' (what compact JSON has
// next) ends it at once.
func (d *decoder) ws() {
	if d.pos < len(d.b) && d.b[d.pos] > ' ' {
		return
	}
	d.wsSlow()
}

func (d *decoder) wsSlow() { d.pos = jsonWS(d.b, d.pos) }

func (d *decoder) peek() byte {
	if d.pos < len(d.b) {
		return d.b[d.pos]
	}
	return 0
}

// members counts the members of the array or object at pos (a BS's; the
// rest of a container is counted by rest), without
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

// rest counts the members of a list, a set or a map from the member at
// pos to the container's end, that member included (the members before
// it are decoded already), without checking the syntax (decoding does).
// As members does, it refuses a container with more members than the
// limits leave room for before any of them is built (nested: they are
// members of a list or map, which take at least a byte each).
func (d *decoder) rest(nested bool) (int, error) {
	room := -1
	if nested && d.lim.MaxItemSize > 0 {
		room = d.lim.MaxItemSize - d.size
	}
	if nested && d.lim.MaxValueSize > 0 && (room < 0 || d.lim.MaxValueSize-d.vsize < room) {
		room = d.lim.MaxValueSize - d.vsize
	}
	n, depth := 1, 0
	b := d.b
scan:
	for i := d.pos; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				break scan
			}
			depth--
		case ',':
			if depth == 0 {
				if n++; room >= 0 && n > room {
					break scan // refused below, without reading the rest
				}
			}
		}
	}
	if room >= 0 && n > room {
		return 0, &DecodeError{Kind: TooLarge, Attr: d.attr}
	}
	return n, nil
}

func (d *decoder) push() error {
	d.jsonD++
	if d.jsonD > maxJSONDepth {
		return errSyntax
	}
	return nil
}

// open enters the array or object whose opening byte is at pos (checked
// by the caller), one level deeper; empty reports that close follows at
// once, read, and the level left.
func (d *decoder) open(close byte) (empty bool, err error) {
	if d.jsonD++; d.jsonD > maxJSONDepth {
		return false, errSyntax
	}
	d.pos++
	d.ws()
	if empty = d.pos < len(d.b) && d.b[d.pos] == close; empty {
		d.pos++
		d.jsonD--
	}
	return empty, nil
}

// next reads what follows a member or an element: a comma (more follow)
// or close (the container ends: done, close read). The caller leaves the
// container's level (jsonD) when it entered one.
func (d *decoder) next(close byte) (done bool, err error) {
	d.ws()
	switch d.peek() {
	case ',':
		d.pos++
		return false, nil
	case close:
		d.pos++
		return true, nil
	}
	return false, errSyntax
}

func (d *decoder) colon() error {
	if p := d.pos; p+1 < len(d.b) && d.b[p] == ':' && d.b[p+1] > ' ' {
		d.pos = p + 1 // compact JSON
		return nil
	}
	d.ws()
	if d.peek() != ':' {
		return errSyntax
	}
	d.pos++
	d.ws()
	return nil
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
// name is str for an attribute name, interned in d.names when set: a
// plain name seen before allocates nothing.
func (d *decoder) name() (string, error) {
	if d.src != "" {
		return d.str()
	}
	if d.names == nil {
		// a plain name is copied into the block of names (see keep)
		start := d.pos + 1
		i := start
		for i < len(d.b) && plainByte[d.b[i]] {
			i++
		}
		if i < len(d.b) && d.b[i] == '"' {
			d.pos = i + 1
			return d.keep(d.b[start:i]), nil
		}
		return d.str()
	}
	start := d.pos + 1
	for i := start; i < len(d.b); i++ {
		c := d.b[i]
		if c == '"' {
			if s, ok := d.names[string(d.b[start:i])]; ok {
				d.pos = i + 1
				return s, nil
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	s, err := d.str()
	if err == nil && len(d.names) < 256 {
		d.names[s] = s
	}
	return s, err
}

// keep returns b as a string in the decoder's current block of names: the
// names of an item take one allocation, not one each (a name kept alone
// keeps its block, at most nameBlock bytes, alive).
func (d *decoder) keep(b []byte) string {
	if len(b) == 0 || len(b) > nameBlock/4 {
		return string(b)
	}
	if cap(d.nameBuf)-len(d.nameBuf) < len(b) {
		d.nameBuf = make([]byte, 0, min(nameBlock, max(64, (len(d.b)-d.from)/4)))
	}
	off := len(d.nameBuf)
	d.nameBuf = append(d.nameBuf, b...)
	return unsafe.String(&d.nameBuf[off], len(b))
}

// nameBlock is the largest block of names.
const nameBlock = 1024

func (d *decoder) str() (string, error) {
	start := d.pos + 1
	i := start
	for i < len(d.b) && plainByte[d.b[i]] {
		i++
	}
	if i < len(d.b) && d.b[i] == '"' {
		d.pos = i + 1
		if d.src != "" {
			return d.src[start:i], nil // d.b is d.src's bytes
		}
		return string(d.b[start:i]), nil
	}
	return d.strRest(start, i)
}

// plainByte is true for the bytes a string has as they are, with no need
// for a look: printable ASCII but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strRest is str for the string that starts at start and has a byte at i
// that is not plain (all before it are).
func (d *decoder) strRest(start, i int) (string, error) {
	plain := true // no escape and valid ASCII so far
	for ; i < len(d.b); i++ {
		c := d.b[i]
		switch {
		case c == '"':
			span := d.b[start:i]
			d.pos = i + 1
			if plain || utf8.Valid(span) {
				if d.src != "" {
					return d.src[start:i], nil // d.b is d.src's bytes
				}
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
	end := strEnd(d.b, i)
	return end, end >= 0
}

// strEnd returns the offset just past the closing quote of the JSON
// string b[i] is inside of (escapes and control bytes checked as
// encoding/json checks them), or -1 when it has none or is not JSON.
// The decoder and Valid share it.
func strEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		case c < 0x20:
			return -1
		}
	}
	return -1
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
		if empty, err := d.open('}'); empty || err != nil {
			return err
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
			if done, err := d.next('}'); done || err != nil {
				d.jsonD--
				return err
			}
		}
	case c == '[':
		if empty, err := d.open(']'); empty || err != nil {
			return err
		}
		for {
			if err := d.skip(); err != nil {
				return err
			}
			if done, err := d.next(']'); done || err != nil {
				d.jsonD--
				return err
			}
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
	end := strEnd(d.b, d.pos+1)
	if end < 0 {
		return errSyntax
	}
	d.pos = end
	return nil
}

// number passes over a JSON number.
func (d *decoder) number() error {
	end := numberEnd(d.b, d.pos)
	if end < 0 {
		return errSyntax
	}
	d.pos = end
	return nil
}

// numberEnd returns the offset just past the JSON number at b[i], or -1
// when there is none. The decoder and Valid share it.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digitsEnd returns the offset past the decimal digits at b[i].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
