package guest

import (
	"math"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// fieldName returns the attribute name of a struct field and whether the
// field is mapped: the ddb tag's name, else the Go name with its first
// letter lower-cased; `ddb:"-"` ignores the field.
func fieldName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("ddb")
	if tag == "-" {
		return "", false
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name, true
	}
	r, n := utf8.DecodeRuneInString(f.Name)
	return string(unicode.ToLower(r)) + f.Name[n:], true
}

func (c *codec) addFields(t reflect.Type, base uintptr) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("ddb") == "" {
			c.addFields(f.Type, base+f.Offset)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, ok := fieldName(f)
		if !ok {
			continue
		}
		fd := field{name: name, offset: base + f.Offset, c: buildCodec(f.Type), pre: prefix8(name),
			encName: string(abi.AppendString(nil, name))}
		if j, dup := c.byName[name]; dup {
			c.fields[j] = fd
			continue
		}
		c.byName[name] = len(c.fields)
		c.fields = append(c.fields, fd)
	}
}

func (c *codec) fillStruct() {
	c.byName = map[string]int{}
	c.addFields(c.t, 0)
	c.entries = c.decFields
	for _, f := range c.fields {
		// A field's codec may still be building (recursive types): decide
		// by kind, as fill does.
		switch k := f.c.t.Kind(); {
		case k == reflect.Pointer, k == reflect.Slice, k == reflect.Map, k == reflect.Interface, f.c.t == valueType:
			c.omits = true
		}
	}
	c.enc = func(e *encoder, p unsafe.Pointer) {
		e.buf = append(e.buf, byte(abi.KindM))
		c.encFields(e, p, false)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		if k != abi.KindM {
			c.mismatch(d, k)
			return
		}
		n := d.r.Count(2)
		c.decFields(d, n, p)
	}
}

// encFields appends the struct at p as an item's entries, preceded by the
// entry count (plus one when opt, for an optional item).
func (c *codec) encFields(e *encoder, p unsafe.Pointer, opt bool) {
	n := len(c.fields)
	if c.omits {
		n = 0
		for i := range c.fields {
			f := &c.fields[i]
			if f.c.omit == nil || !f.c.omit(unsafe.Add(p, f.offset)) {
				n++
			}
		}
	}
	if opt {
		n++
	}
	buf := e.buf
	if n < 0x80 {
		buf = append(buf, byte(n))
	} else {
		buf = abi.AppendUvarint(buf, uint64(n))
	}
	for i := range c.fields {
		f := &c.fields[i]
		q := unsafe.Add(p, f.offset)
		if f.c.omit != nil && f.c.omit(q) {
			continue
		}
		buf = append(buf, f.encName...)
		switch f.c.fast {
		case fastString, fastNumber:
			str := *(*string)(q)
			kind := abi.KindS
			if f.c.fast == fastNumber {
				kind = abi.KindN
				if str == "" {
					str = "0"
				}
			}
			if len(str) < 0x80 {
				buf = append(buf, byte(kind), byte(len(str)))
				buf = append(buf, str...)
			} else {
				buf = abi.AppendString(append(buf, byte(kind)), str)
			}
		case fastInt64:
			buf = appendIntN(buf, *(*int64)(q))
		case fastFloat64:
			v := *(*float64)(q)
			if math.IsInf(v, 0) || math.IsNaN(v) {
				e.buf = buf
				f.c.enc(e, q) // reports the error
				buf = e.buf
				break
			}
			var tmp [32]byte
			digits := appendFloat(tmp[:0], v)
			buf = append(buf, byte(abi.KindN), byte(len(digits)))
			buf = append(buf, digits...)
		case fastBool:
			b := byte(0)
			if *(*bool)(q) {
				b = 1
			}
			buf = append(buf, byte(abi.KindBOOL), b)
		default:
			e.buf = buf
			f.c.enc(e, q)
			buf = e.buf
		}
	}
	e.buf = buf
}

// decFields reads n item entries into the struct at p; unknown attributes
// are skipped.
func (c *codec) decFields(d *decoder, n int, p unsafe.Pointer) {
	if d.depth++; d.depth > abi.MaxDepth {
		d.r.Fail("nesting deeper than %d", abi.MaxDepth)
		return
	}
	for i := 0; i < n; i++ {
		name, ok := d.r.ShortString()
		if !ok {
			if name = d.r.String(); d.r.Err() != nil {
				break
			}
		}
		j := -1
		if len(c.fields) <= 16 {
			var pre uint64
			havePre := false
			for x := range c.fields {
				f := &c.fields[x]
				if len(f.name) != len(name) || f.name[0] != name[0] {
					continue
				}
				if !havePre {
					pre, havePre = prefix8(name), true
				}
				if f.pre == pre && (len(name) <= 8 || f.name == name) {
					j = x
					break
				}
			}
		} else if x, ok := c.byName[name]; ok {
			j = x
		}
		if j < 0 {
			// Skip short scalars inline; anything else the long way.
			if kb, ok := d.r.NextByte(); ok {
				switch abi.Kind(kb) {
				case abi.KindS, abi.KindN, abi.KindB:
					if _, ok := d.r.ShortString(); ok {
						continue
					}
				case abi.KindNULL:
					continue
				}
				d.r.Unread()
			}
			d.r.SkipValue()
			if d.r.Err() != nil {
				break
			}
			continue
		}
		f := &c.fields[j]
		kb, ok := d.r.NextByte()
		if !ok {
			d.r.Byte()
			break
		}
		k := abi.Kind(kb)
		q := unsafe.Add(p, f.offset)
		switch {
		case f.c.fast == fastString && k == abi.KindS, f.c.fast == fastNumber && k == abi.KindN:
			s, ok := d.r.ShortString()
			if !ok {
				s = d.r.String()
			}
			*(*string)(q) = s
		case f.c.fast == fastFloat64 && k == abi.KindN:
			s, ok := d.r.ShortString()
			if !ok {
				s = d.r.String()
			}
			v, err := parseFloat(s)
			if err != nil {
				d.notFit(f.name, s, "float64")
			}
			*(*float64)(q) = v
		case f.c.fast == fastInt64 && k == abi.KindN:
			s := d.r.String()
			v, ok := parseInt(s, 64)
			if !ok {
				d.notFit(f.name, s, "int64")
			}
			*(*int64)(q) = v
		case k == abi.KindNULL && f.c.t.Kind() != reflect.Pointer && f.c.t != valueType:
			typedmemclr(f.c.t, q)
		default:
			d.field = f.name
			f.c.dec(d, k, q)
		}
	}
	d.depth--
}

// typedmemclr sets the value of type t at p to its zero value.
func typedmemclr(t reflect.Type, p unsafe.Pointer) {
	reflect.NewAt(t, p).Elem().SetZero()
}

// decodeOptItem decodes an encoded optional item into the struct or map at
// p; an absent item leaves it unchanged.
func decodeOptItem(raw string, c *codec, p unsafe.Pointer) error {
	if c.entries == nil {
		return &MappingError{Type: c.t.String(), Reason: "an item maps only to a struct or a map[string]T"}
	}
	var d decoder
	d.r.Reset(raw)
	if n, ok := d.r.OptCount(); ok {
		c.entries((*decoder)(noescape(unsafe.Pointer(&d))), n, p)
	}
	return d.end()
}

// encodeOptItem appends the struct at p as an optional item.
func encodeOptItem(dst []byte, c *codec, p unsafe.Pointer) ([]byte, error) {
	e := encoder{buf: dst}
	if c.fields != nil || c.t.Kind() == reflect.Struct {
		c.encFields((*encoder)(noescape(unsafe.Pointer(&e))), noescape(p), true)
		return e.buf, e.err
	}
	return appendOptItemOf(dst, reflect.NewAt(c.t, p).Elem().Interface())
}
