package abi

import (
	"errors"
	"fmt"
)

// The binary encoding (see ABI.md, "Encoding"). Integers and lengths are
// unsigned LEB128 varints; strings and byte strings are a length followed by
// the bytes; a Value is its Kind byte followed by the kind's payload; an
// optional item is its entry count plus one, 0 meaning nil.

// MaxDepth is the deepest nesting of M and L values a decoder accepts
// (DynamoDB itself allows 32 levels).
const MaxDepth = 64

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("abi: malformed encoding")

// AppendUvarint appends x as an unsigned LEB128 varint.
func AppendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

// AppendString appends s as a length-prefixed string.
func AppendString(dst []byte, s string) []byte {
	dst = AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendBytes appends b as a length-prefixed byte string.
func AppendBytes(dst []byte, b []byte) []byte {
	dst = AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendBool appends b as one byte, 0 or 1.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendValue appends the encoding of v: its Kind byte, then its payload.
func AppendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.Kind))
	switch v.Kind {
	case KindS, KindN:
		dst = AppendString(dst, v.Str)
	case KindB:
		dst = AppendBytes(dst, v.Bytes)
	case KindBOOL:
		dst = AppendBool(dst, v.Bool)
	case KindM:
		dst = appendEntries(dst, v.Map)
	case KindL:
		dst = AppendUvarint(dst, uint64(len(v.List)))
		for i := range v.List {
			dst = AppendValue(dst, v.List[i])
		}
	case KindSS, KindNS:
		dst = AppendUvarint(dst, uint64(len(v.Strs)))
		for _, s := range v.Strs {
			dst = AppendString(dst, s)
		}
	case KindBS:
		dst = AppendUvarint(dst, uint64(len(v.Blobs)))
		for _, b := range v.Blobs {
			dst = AppendBytes(dst, b)
		}
	}
	return dst
}

// AppendItem appends a non-optional item (the payload of an M value): its
// entry count, then each name and value, names in ascending byte order so the
// encoding of an item is deterministic.
func AppendItem(dst []byte, it Item) []byte { return appendEntries(dst, it) }

// AppendOptItem appends an optional item: 0 for nil, else the entry count
// plus one followed by the entries.
func AppendOptItem(dst []byte, it Item) []byte {
	if it == nil {
		return append(dst, 0)
	}
	dst = AppendUvarint(dst, uint64(len(it))+1)
	return appendSorted(dst, it)
}

func appendEntries(dst []byte, it Item) []byte {
	dst = AppendUvarint(dst, uint64(len(it)))
	return appendSorted(dst, it)
}

// Reader decodes the binary encoding from a string. Its methods never panic:
// the first error is kept (Err) and every later read returns a zero value.
// Decoded strings are substrings of the input, so decoding allocates only
// for maps, slices and byte strings.
type Reader struct {
	s   string
	off int
	err error
}

// NewReader returns a Reader over s.
func NewReader(s string) *Reader { return &Reader{s: s} }

// Reset makes r read s from its start, clearing any error.
func (r *Reader) Reset(s string) { *r = Reader{s: s} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining returns how many bytes are left to read.
func (r *Reader) Remaining() int { return len(r.s) - r.off }

// Offset returns the number of bytes read so far.
func (r *Reader) Offset() int { return r.off }

// Fail records a decoding error (wrapping ErrMalformed) unless one is
// already kept, and moves to the end of the input so later reads fail fast.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrMalformed, fmt.Sprintf(format, args...), r.off)
	}
	r.off = len(r.s)
}

// End fails unless every byte was read.
func (r *Reader) End() error {
	if r.err == nil && r.off != len(r.s) {
		r.Fail("%d trailing bytes", len(r.s)-r.off)
	}
	return r.err
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if o := r.off; o < len(r.s) {
		r.off = o + 1
		return r.s[o]
	}
	return r.eof()
}

func (r *Reader) eof() byte {
	r.Fail("unexpected end")
	return 0
}

// Uvarint reads an unsigned LEB128 varint of at most 10 bytes.
func (r *Reader) Uvarint() uint64 {
	if o := r.off; o < len(r.s) {
		if b := r.s[o]; b < 0x80 {
			r.off = o + 1
			return uint64(b)
		}
	}
	return r.uvarint()
}

func (r *Reader) uvarint() uint64 {
	var x uint64
	var shift uint
	for i := 0; ; i++ {
		if r.off >= len(r.s) {
			r.Fail("unexpected end in varint")
			return 0
		}
		b := r.s[r.off]
		r.off++
		if i == 9 && b > 1 {
			r.Fail("varint overflows 64 bits")
			return 0
		}
		if b < 0x80 {
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
}

// Count reads an element count and checks it against the bytes left, given
// that every element takes at least min bytes; a hostile count therefore
// never makes the decoder allocate more than the input can fill.
func (r *Reader) Count(min int) int {
	n := r.Uvarint()
	if min < 1 {
		min = 1
	}
	if n > uint64(r.Remaining()/min) {
		r.Fail("count %d exceeds the input", n)
		return 0
	}
	return int(n)
}

// String reads a length-prefixed string (a substring of the input).
func (r *Reader) String() string {
	if o := r.off; o < len(r.s) {
		if n := int(r.s[o]); n < 0x80 && n < len(r.s)-o {
			r.off = o + 1 + n
			return r.s[o+1 : o+1+n]
		}
	}
	return r.string()
}

func (r *Reader) string() string {
	n := r.Uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(r.Remaining()) {
		r.Fail("length %d exceeds the input", n)
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

// Fixed32 reads a 4-byte little-endian unsigned integer.
func (r *Reader) Fixed32() uint32 {
	if o := r.off; o+4 <= len(r.s) {
		r.off = o + 4
		s := r.s[o : o+4]
		return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	}
	return uint32(r.eof())
}

// Raw reads the next n bytes, as a substring of the input.
func (r *Reader) Raw(n int) string {
	if o := r.off; uint(n) <= uint(len(r.s)-o) {
		r.off = o + n
		return r.s[o : o+n]
	}
	r.eof()
	return ""
}

// Bytes reads a length-prefixed byte string into a new slice.
func (r *Reader) Bytes() []byte { return []byte(r.String()) }

// Bool reads a bool byte, which must be 0 or 1.
func (r *Reader) Bool() bool {
	switch r.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail("bad bool")
	return false
}

// Value reads one Value.
func (r *Reader) Value() Value { return r.value(0) }

// ValuePayload reads the payload of a Value whose Kind byte k was already
// read.
func (r *Reader) ValuePayload(k Kind) Value { return r.payload(k, 0) }

func (r *Reader) value(depth int) Value { return r.payload(Kind(r.Byte()), depth) }

func (r *Reader) payload(k Kind, depth int) Value {
	if r.err != nil {
		return Value{}
	}
	switch k {
	case KindInvalid, KindNULL:
		return Value{Kind: k}
	case KindS, KindN:
		return Value{Kind: k, Str: r.String()}
	case KindB:
		return Value{Kind: k, Bytes: r.Bytes()}
	case KindBOOL:
		return Value{Kind: k, Bool: r.Bool()}
	case KindM:
		n := r.Count(2)
		return Value{Kind: k, Map: r.entries(n, depth+1)}
	case KindL:
		if depth >= MaxDepth {
			r.Fail("nesting deeper than %d", MaxDepth)
			return Value{}
		}
		n := r.Count(1)
		l := make([]Value, n)
		for i := range l {
			l[i] = r.value(depth + 1)
		}
		return Value{Kind: k, List: l}
	case KindSS, KindNS:
		n := r.Count(1)
		ss := make([]string, n)
		for i := range ss {
			ss[i] = r.String()
		}
		return Value{Kind: k, Strs: ss}
	case KindBS:
		n := r.Count(1)
		bs := make([][]byte, n)
		for i := range bs {
			bs[i] = r.Bytes()
		}
		return Value{Kind: k, Blobs: bs}
	}
	r.Fail("unknown kind %d", k)
	return Value{}
}

func (r *Reader) entries(n, depth int) Item {
	if depth > MaxDepth {
		r.Fail("nesting deeper than %d", MaxDepth)
		return nil
	}
	m := make(Item, n)
	for i := 0; i < n && r.err == nil; i++ {
		name := r.String()
		m[name] = r.value(depth)
		if len(m) != i+1 && r.err == nil {
			r.Fail("duplicate attribute %q", name)
		}
	}
	if r.err != nil {
		return nil
	}
	return m
}

// Item reads a non-optional item (never nil on success).
func (r *Reader) Item() Item {
	n := r.Count(2)
	if r.err != nil {
		return nil
	}
	return r.entries(n, 0)
}

// OptItem reads an optional item (nil for the 0 marker).
func (r *Reader) OptItem() Item {
	n, ok := r.OptCount()
	if !ok {
		return nil
	}
	return r.entries(n, 0)
}

// OptCount reads an optional item's header: ok is false for nil (or on
// error), else n is its entry count.
func (r *Reader) OptCount() (n int, ok bool) {
	c := r.Uvarint()
	if c == 0 {
		return 0, false
	}
	if c-1 > uint64(r.Remaining()/2) {
		r.Fail("count %d exceeds the input", c-1)
		return 0, false
	}
	return int(c - 1), true
}

// SkipValue skips one Value without allocating.
func (r *Reader) SkipValue() { r.skip(0) }

func (r *Reader) skip(depth int) {
	if depth > MaxDepth {
		r.Fail("nesting deeper than %d", MaxDepth)
		return
	}
	k := Kind(r.Byte())
	switch k {
	case KindInvalid, KindNULL:
	case KindS, KindN, KindB:
		r.SkipString()
	case KindBOOL:
		r.Bool()
	case KindM:
		n := r.Count(2)
		for i := 0; i < n && r.err == nil; i++ {
			r.SkipString()
			r.skip(depth + 1)
		}
	case KindL:
		n := r.Count(1)
		for i := 0; i < n && r.err == nil; i++ {
			r.skip(depth + 1)
		}
	case KindSS, KindNS, KindBS:
		n := r.Count(1)
		for i := 0; i < n && r.err == nil; i++ {
			r.SkipString()
		}
	default:
		r.Fail("unknown kind %d", k)
	}
}

// RawOptItem skips an optional item and returns its encoding (header
// included, as AppendOptItem wrote it) and whether it is present.
func (r *Reader) RawOptItem() (raw string, present bool) {
	start := r.off
	n, ok := r.OptCount()
	if !ok {
		return "", false
	}
	for i := 0; i < n && r.err == nil; i++ {
		r.SkipString()
		r.skip(1)
	}
	if r.err != nil {
		return "", false
	}
	return r.s[start:r.off], true
}

// RawValue skips one Value and returns its encoding.
func (r *Reader) RawValue() string {
	start := r.off
	r.skip(0)
	if r.err != nil {
		return ""
	}
	return r.s[start:r.off]
}

// DecodeValue decodes one encoded Value that must fill b.
func DecodeValue(b []byte) (Value, error) {
	r := Reader{s: string(b)}
	v := r.Value()
	if err := r.End(); err != nil {
		return Value{}, err
	}
	return v, nil
}

// DecodeOptItem decodes one encoded optional item that must fill b.
func DecodeOptItem(b []byte) (Item, error) {
	r := Reader{s: string(b)}
	it := r.OptItem()
	if err := r.End(); err != nil {
		return nil, err
	}
	return it, nil
}

// SkipString skips a length-prefixed string or byte string.
func (r *Reader) SkipString() {
	n := r.Uvarint()
	if n > uint64(r.Remaining()) {
		r.Fail("length %d exceeds the input", n)
		return
	}
	r.off += int(n)
}
