package ddblocal

import (
	"encoding/binary"
	"hash/maphash"
)

// digestSeed seeds requestDigest's hashes (digests are compared within one
// process only).
var digestSeed = maphash.MakeSeed()

// requestDigest is a digest of a TransactWriteItems request, its
// ClientRequestToken left out, that does not depend on the order of the
// members of its JSON objects: the SDKs write a map's members in any
// order, so the same request sent twice need not be the same bytes.
// Strings and numbers are compared as written. One pass over the body, no
// allocation (a body that does not parse, which the request's checks
// refuse before this, is digested as its bytes).
func requestDigest(body []byte) uint64 {
	d := digester{b: body}
	h, ok := d.value(true)
	if d.ws(); !ok || d.pos != len(d.b) {
		return maphash.Bytes(digestSeed, body)
	}
	return h
}

// digester hashes JSON values: an object is the sum of its members'
// hashes (so their order does not count), an array the chain of its
// elements', a string or a literal its bytes as written.
type digester struct {
	b   []byte
	pos int
}

func (d *digester) ws() {
	for d.pos < len(d.b) {
		switch d.b[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// mix hashes a tag and two words.
func mix(tag byte, a, b uint64) uint64 {
	var buf [17]byte
	buf[0] = tag
	binary.LittleEndian.PutUint64(buf[1:], a)
	binary.LittleEndian.PutUint64(buf[9:], b)
	return maphash.Bytes(digestSeed, buf[:])
}

// value hashes the value at pos; top is the request's own object.
func (d *digester) value(top bool) (uint64, bool) {
	d.ws()
	if d.pos >= len(d.b) {
		return 0, false
	}
	switch c := d.b[d.pos]; c {
	case '{':
		return d.object(top)
	case '[':
		return d.array()
	case '"':
		s, ok := d.str()
		return mix('s', maphash.Bytes(digestSeed, s), uint64(len(s))), ok
	default:
		start := d.pos
		for d.pos < len(d.b) {
			switch d.b[d.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return mix('l', maphash.Bytes(digestSeed, d.b[start:d.pos]), 0), d.pos > start
			}
			d.pos++
		}
		return mix('l', maphash.Bytes(digestSeed, d.b[start:d.pos]), 0), d.pos > start
	}
}

// str returns the raw bytes of the string at pos (escapes as written).
func (d *digester) str() ([]byte, bool) {
	start := d.pos + 1
	for i := start; i < len(d.b); i++ {
		switch d.b[i] {
		case '\\':
			i++
		case '"':
			d.pos = i + 1
			return d.b[start:i], true
		}
	}
	return nil, false
}

func (d *digester) object(top bool) (uint64, bool) {
	d.pos++ // '{'
	var sum, n uint64
	d.ws()
	if d.pos < len(d.b) && d.b[d.pos] == '}' {
		d.pos++
		return mix('o', 0, 0), true
	}
	for {
		d.ws()
		if d.pos >= len(d.b) || d.b[d.pos] != '"' {
			return 0, false
		}
		name, ok := d.str()
		if !ok {
			return 0, false
		}
		if d.ws(); d.pos >= len(d.b) || d.b[d.pos] != ':' {
			return 0, false
		}
		d.pos++
		v, ok := d.value(false)
		if !ok {
			return 0, false
		}
		if !top || string(name) != "ClientRequestToken" {
			sum += mix('m', maphash.Bytes(digestSeed, name), v)
			n++
		}
		if d.ws(); d.pos >= len(d.b) {
			return 0, false
		}
		switch d.b[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return mix('o', sum, n), true
		default:
			return 0, false
		}
	}
}

func (d *digester) array() (uint64, bool) {
	d.pos++ // '['
	h := mix('a', 0, 0)
	d.ws()
	if d.pos < len(d.b) && d.b[d.pos] == ']' {
		d.pos++
		return h, true
	}
	for {
		v, ok := d.value(false)
		if !ok {
			return 0, false
		}
		h = mix('e', h, v)
		if d.ws(); d.pos >= len(d.b) {
			return 0, false
		}
		switch d.b[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return h, true
		default:
			return 0, false
		}
	}
}
