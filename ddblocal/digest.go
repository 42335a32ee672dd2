package ddblocal

import (
	"encoding/binary"
	"math/bits"
)

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
		return hashBytes(body)
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
	return fmix(hashRound(hashRound(uint64(tag)*hashK1^hashK0, a), b))
}

// hashBytes is a 64-bit hash of b that is the same in every process and
// on every machine: a data dir stores its transactions' digests with their
// tokens (MurmurHash3's rounds over 8-byte little-endian words and its
// finalizer; the length is hashed first, so the zero-padded tail cannot
// collide with a longer string).
func hashBytes(b []byte) uint64 {
	h := uint64(len(b))*hashK1 ^ hashK0
	for len(b) >= 8 {
		h = hashRound(h, binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var t [8]byte
		copy(t[:], b)
		h = hashRound(h, binary.LittleEndian.Uint64(t[:]))
	}
	return fmix(h)
}

const (
	hashK0 = 0x9e3779b97f4a7c15
	hashK1 = 0x87c37b91114253d5
	hashK2 = 0x4cf5ad432745937f
)

func hashRound(h, w uint64) uint64 {
	w *= hashK1
	w = bits.RotateLeft64(w, 31)
	w *= hashK2
	h ^= w
	return bits.RotateLeft64(h, 27)*5 + 0x52dce729
}

// fmix is MurmurHash3's 64-bit finalizer: every bit of h moves every bit
// of the result.
func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
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
		return mix('s', hashBytes(s), uint64(len(s))), ok
	default:
		start := d.pos
		for d.pos < len(d.b) {
			switch d.b[d.pos] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return mix('l', hashBytes(d.b[start:d.pos]), 0), d.pos > start
			}
			d.pos++
		}
		return mix('l', hashBytes(d.b[start:d.pos]), 0), d.pos > start
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
			sum += mix('m', hashBytes(name), v)
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
