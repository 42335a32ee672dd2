package guest

import (
	"reflect"
	"runtime"
	"sort"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// fillSlice maps []T to L. Decoding also accepts the sets: SS and NS into
// slices of strings or numbers, BS into [][]byte.
func (c *codec) fillSlice() {
	t := c.t
	elem := buildCodec(t.Elem())
	size := t.Elem().Size()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		h := (*sliceHeader)(p)
		e.buf = append(e.buf, byte(abi.KindL))
		e.buf = abi.AppendUvarint(e.buf, uint64(h.len))
		for i := 0; i < h.len; i++ {
			elem.enc(e, unsafe.Add(h.data, uintptr(i)*size))
		}
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		var ek abi.Kind
		switch k {
		case abi.KindL:
		case abi.KindSS:
			ek = abi.KindS
		case abi.KindNS:
			ek = abi.KindN
		case abi.KindBS:
			ek = abi.KindB
		default:
			c.mismatch(d, k)
			return
		}
		n := d.r.Count(1)
		if d.r.Err() != nil {
			return
		}
		if d.depth++; d.depth > abi.MaxDepth {
			d.r.Fail("nesting deeper than %d", abi.MaxDepth)
			return
		}
		s := reflect.MakeSlice(t, n, n)
		data := s.UnsafePointer()
		for i := 0; i < n && d.r.Err() == nil; i++ {
			q := unsafe.Add(data, uintptr(i)*size)
			k := ek
			if k == abi.KindInvalid {
				k = abi.Kind(d.r.Byte())
				if k == abi.KindNULL && elem.t.Kind() != reflect.Pointer && elem.t != valueType {
					continue
				}
			}
			elem.dec(d, k, q)
		}
		d.depth--
		*(*sliceHeader)(p) = sliceHeader{data: data, len: n, cap: n}
	}
	c.omit = func(p unsafe.Pointer) bool { return (*sliceHeader)(p).data == nil }
}

// fillMap maps map[string]T to M, entries in ascending key order.
func (c *codec) fillMap() {
	t := c.t
	if t.Key().Kind() != reflect.String {
		c.enc = func(e *encoder, _ unsafe.Pointer) { e.fail(t, "map keys must be strings") }
		c.dec = func(d *decoder, _ abi.Kind, _ unsafe.Pointer) { d.r.Fail("map keys of %s must be strings", t) }
		return
	}
	elem := buildCodec(t.Elem())
	c.enc = func(e *encoder, p unsafe.Pointer) {
		m := reflect.NewAt(t, p).Elem()
		keys := m.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		e.buf = append(e.buf, byte(abi.KindM))
		e.buf = abi.AppendUvarint(e.buf, uint64(len(keys)))
		tmp := reflect.New(t.Elem())
		for _, k := range keys {
			e.buf = abi.AppendString(e.buf, k.String())
			tmp.Elem().Set(m.MapIndex(k))
			elem.enc(e, tmp.UnsafePointer())
		}
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		if k != abi.KindM {
			c.mismatch(d, k)
			return
		}
		c.entries(d, d.r.Count(2), p)
	}
	c.entries = func(d *decoder, n int, p unsafe.Pointer) {
		if d.r.Err() != nil {
			return
		}
		if d.depth++; d.depth > abi.MaxDepth {
			d.r.Fail("nesting deeper than %d", abi.MaxDepth)
			return
		}
		m := reflect.MakeMapWithSize(t, n)
		for i := 0; i < n && d.r.Err() == nil; i++ {
			name := d.r.String()
			tmp := reflect.New(t.Elem())
			if k := abi.Kind(d.r.Byte()); k != abi.KindNULL || elem.t.Kind() == reflect.Pointer || elem.t == valueType {
				elem.dec(d, k, tmp.UnsafePointer())
			}
			m.SetMapIndex(reflect.ValueOf(name).Convert(t.Key()), tmp.Elem())
		}
		d.depth--
		if d.r.Err() == nil {
			reflect.NewAt(t, p).Elem().Set(m)
		}
	}
	c.omit = func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
}

// fillInterface encodes an interface by its dynamic value; an empty
// interface decodes to natural Go values (see Natural).
func (c *codec) fillInterface() {
	t := c.t
	c.enc = func(e *encoder, p unsafe.Pointer) {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			e.buf = append(e.buf, byte(abi.KindNULL))
			return
		}
		encodeReflect(e, v.Elem())
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		if t.NumMethod() != 0 {
			d.r.Fail("cannot decode into non-empty interface %s", t)
			return
		}
		*(*any)(p) = Natural(d.r.ValuePayload(k))
	}
	c.omit = func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsNil() }
}

// encodeReflect appends the Value encoding of v (any type).
func encodeReflect(e *encoder, v reflect.Value) {
	c := codecFor(v.Type())
	tmp := reflect.New(v.Type())
	tmp.Elem().Set(v)
	c.enc(e, tmp.UnsafePointer())
}

// Natural converts a Value to plain Go: S → string, N → Number, B → []byte,
// BOOL → bool, NULL → nil, M → map[string]any, L → []any, SS → []string,
// NS → []Number, BS → [][]byte.
func Natural(v abi.Value) any {
	switch v.Kind {
	case abi.KindS:
		return v.Str
	case abi.KindN:
		return Number(v.Str)
	case abi.KindB:
		return v.Bytes
	case abi.KindBOOL:
		return v.Bool
	case abi.KindM:
		m := make(map[string]any, len(v.Map))
		for k, x := range v.Map {
			m[k] = Natural(x)
		}
		return m
	case abi.KindL:
		l := make([]any, len(v.List))
		for i, x := range v.List {
			l[i] = Natural(x)
		}
		return l
	case abi.KindSS:
		return v.Strs
	case abi.KindNS:
		ns := make([]Number, len(v.Strs))
		for i, s := range v.Strs {
			ns[i] = Number(s)
		}
		return ns
	case abi.KindBS:
		return v.Blobs
	}
	return nil
}

// appendValueOf appends the Value encoding of x; nil encodes as NULL.
func appendValueOf(dst []byte, x any) ([]byte, error) {
	if x == nil {
		return append(dst, byte(abi.KindNULL)), nil
	}
	c, direct := typeCodec((*eface)(noescape(unsafe.Pointer(&x))).typ)
	ef := (*eface)(noescape(unsafe.Pointer(&x)))
	p := ef.data
	if direct {
		// The interface holds a pointer-shaped value itself, not a pointer to it.
		p = unsafe.Pointer(&ef.data)
	}
	e := encoder{buf: dst}
	c.enc((*encoder)(noescape(unsafe.Pointer(&e))), p)
	runtime.KeepAlive(x)
	return e.buf, e.err
}

// appendOptItemOf appends x, which must encode as M, as an optional item.
func appendOptItemOf(dst []byte, x any) ([]byte, error) {
	if x == nil {
		return append(dst, 0), nil
	}
	c, direct := typeCodec((*eface)(noescape(unsafe.Pointer(&x))).typ)
	if c.fields != nil && !direct {
		// A struct (not pointer-shaped): its fields, straight as an item.
		e := encoder{buf: dst}
		c.encFields((*encoder)(noescape(unsafe.Pointer(&e))), (*eface)(noescape(unsafe.Pointer(&x))).data, true)
		runtime.KeepAlive(x)
		if e.err != nil {
			return dst, e.err
		}
		return e.buf, nil
	}
	start := len(dst)
	dst, err := appendValueOf(dst, x)
	if err != nil {
		return dst[:start], err
	}
	if abi.Kind(dst[start]) != abi.KindM {
		return dst[:start], &MappingError{Type: reflect.TypeOf(x).String(), Reason: "does not map to an item (M)"}
	}
	// Rewrite "M count entries" as "count+1 entries".
	var r abi.Reader
	r.Reset(string(dst[start+1 : min(len(dst), start+11)]))
	n := r.Uvarint()
	rest := dst[start+1+r.Offset():]
	var buf [10]byte
	hdr := abi.AppendUvarint(buf[:0], n+1)
	out := append(dst[:start], hdr...)
	return append(out, rest...), nil
}

// AppendItem appends v — a struct, a map[string]T or an abi.Item — mapped to
// an item, encoded as an optional item of the abi (see ABI.md).
func AppendItem(dst []byte, v any) ([]byte, error) { return appendOptItemOf(dst, v) }

// ToItem maps v — a struct, a map[string]T or an abi.Item — to an item.
func ToItem(v any) (abi.Item, error) {
	b, err := appendOptItemOf(nil, v)
	if err != nil {
		return nil, err
	}
	return abi.DecodeOptItem(b)
}

// FromItem maps an item into v, a pointer to a struct or a map[string]T.
func FromItem(it abi.Item, v any) error {
	return decodeInto(string(abi.AppendOptItem(nil, it)), v)
}
