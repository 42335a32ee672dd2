package guest

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// Mapping between Go values and the abi encoding, straight from and to bytes
// (no abi.Item in between). Each Go type gets a codec, built once by
// reflection and cached; encoding and decoding then work on field offsets.

// Number is an exact decimal number (DynamoDB N) kept as its text, for
// amounts that must not pass through float64.
type Number string

// Float returns n parsed as a float64 (0 when n is not a number).
func (n Number) Float() float64 { f, _ := strconv.ParseFloat(string(n), 64); return f }

// Int returns n parsed as an int64 (0 when n is not an integer).
func (n Number) Int() int64 { i, _ := strconv.ParseInt(string(n), 10, 64); return i }

// MappingError reports a value that cannot be mapped to or from a Go type.
type MappingError struct {
	Type   string // the Go type
	Reason string
}

// Error implements error.
func (e *MappingError) Error() string { return "guest: mapping " + e.Type + ": " + e.Reason }

type encoder struct {
	buf []byte
	err error
}

func (e *encoder) fail(t reflect.Type, format string, args ...any) {
	if e.err == nil {
		e.err = &MappingError{Type: t.String(), Reason: fmt.Sprintf(format, args...)}
	}
}

type decoder struct {
	r     abi.Reader
	depth int
}

// codec maps one Go type. enc appends a whole Value (kind byte included);
// dec reads the payload of a Value whose kind byte k was already read; omit
// reports values stored as absent attributes (nil pointers, slices, maps).
type codec struct {
	t    reflect.Type
	enc  func(e *encoder, p unsafe.Pointer)
	dec  func(d *decoder, k abi.Kind, p unsafe.Pointer)
	omit func(p unsafe.Pointer) bool
	// fields is set for structs (mapped to M).
	fields []field
	byName map[string]int
	// entries reads n item entries into p (structs and maps).
	entries func(d *decoder, n int, p unsafe.Pointer)
	// fast names the common kinds decFields and encFields handle inline.
	fast uint8
	// omits is set for structs with a field that may be omitted.
	omits bool
}

const (
	fastNone uint8 = iota
	fastString
	fastFloat64
	fastInt64
	fastNumber
	fastBool
)

type field struct {
	name   string
	offset uintptr
	c      *codec
	pre    uint64 // the name's first 8 bytes, little-endian, for a cheap match
	// encName is the name encoded as a str, ready to append.
	encName string
}

// prefix8 returns the first (up to) 8 bytes of s as a little-endian integer.
func prefix8(s string) uint64 {
	var x uint64
	n := len(s)
	if n > 8 {
		n = 8
	}
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(s[i])
	}
	return x
}

var (
	codecs   sync.Map // reflect.Type -> *codec
	buildMu  sync.Mutex
	building = map[reflect.Type]*codec{}
)

var (
	numberType = reflect.TypeOf(Number(""))
	valueType  = reflect.TypeOf(abi.Value{})
	bytesType  = reflect.TypeOf([]byte(nil))
)

func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	return buildCodec(t)
}

// buildCodec builds (with buildMu held) the codec of t; recursive types find
// their own codec, not yet complete, in building.
func buildCodec(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	if c, ok := building[t]; ok {
		return c
	}
	c := &codec{t: t}
	building[t] = c
	c.fill()
	switch {
	case t == numberType:
		c.fast = fastNumber
	case t.Kind() == reflect.String:
		c.fast = fastString
	case t.Kind() == reflect.Float64:
		c.fast = fastFloat64
	case t.Kind() == reflect.Int64 || (t.Kind() == reflect.Int && t.Size() == 8):
		c.fast = fastInt64
	case t.Kind() == reflect.Bool:
		c.fast = fastBool
	}
	delete(building, t)
	codecs.Store(t, c)
	return c
}

func (c *codec) mismatch(d *decoder, k abi.Kind) {
	d.r.Fail("cannot decode %s into %s", k, c.t)
}

func (c *codec) fill() {
	t := c.t
	switch {
	case t == numberType:
		c.enc = func(e *encoder, p unsafe.Pointer) {
			s := *(*string)(p)
			if s == "" {
				s = "0"
			}
			e.buf = append(e.buf, byte(abi.KindN))
			e.buf = abi.AppendString(e.buf, s)
		}
		c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
			if k != abi.KindN {
				c.mismatch(d, k)
				return
			}
			*(*string)(p) = d.r.String()
		}
		return
	case t == valueType:
		c.enc = func(e *encoder, p unsafe.Pointer) { e.buf = abi.AppendValue(e.buf, *(*abi.Value)(p)) }
		c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
			*(*abi.Value)(p) = d.r.ValuePayload(k)
		}
		c.omit = func(p unsafe.Pointer) bool { return (*abi.Value)(p).Kind == abi.KindInvalid }
		return
	case t == bytesType:
		c.enc = func(e *encoder, p unsafe.Pointer) {
			e.buf = append(e.buf, byte(abi.KindB))
			e.buf = abi.AppendBytes(e.buf, *(*[]byte)(p))
		}
		c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
			if k != abi.KindB {
				c.mismatch(d, k)
				return
			}
			*(*[]byte)(p) = d.r.Bytes()
		}
		c.omit = func(p unsafe.Pointer) bool { return *(*[]byte)(p) == nil }
		return
	}
	switch t.Kind() {
	case reflect.String:
		c.enc = func(e *encoder, p unsafe.Pointer) {
			e.buf = append(e.buf, byte(abi.KindS))
			e.buf = abi.AppendString(e.buf, *(*string)(p))
		}
		c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
			if k != abi.KindS {
				c.mismatch(d, k)
				return
			}
			*(*string)(p) = d.r.String()
		}
	case reflect.Bool:
		c.enc = func(e *encoder, p unsafe.Pointer) {
			e.buf = append(e.buf, byte(abi.KindBOOL))
			e.buf = abi.AppendBool(e.buf, *(*bool)(p))
		}
		c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
			if k != abi.KindBOOL {
				c.mismatch(d, k)
				return
			}
			*(*bool)(p) = d.r.Bool()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.fillInt()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.fillUint()
	case reflect.Float32, reflect.Float64:
		c.fillFloat()
	case reflect.Pointer:
		c.fillPointer()
	case reflect.Struct:
		c.fillStruct()
	case reflect.Slice:
		c.fillSlice()
	case reflect.Map:
		c.fillMap()
	case reflect.Interface:
		c.fillInterface()
	default:
		c.enc = func(e *encoder, _ unsafe.Pointer) { e.fail(t, "unsupported kind %s", t.Kind()) }
		c.dec = func(d *decoder, _ abi.Kind, _ unsafe.Pointer) { d.r.Fail("unsupported Go type %s", t) }
	}
}

func (c *codec) readNumber(d *decoder, k abi.Kind) (string, bool) {
	if k != abi.KindN {
		c.mismatch(d, k)
		return "", false
	}
	return d.r.String(), d.r.Err() == nil
}

func (c *codec) fillInt() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var v int64
		switch bits {
		case 8:
			v = int64(*(*int8)(p))
		case 16:
			v = int64(*(*int16)(p))
		case 32:
			v = int64(*(*int32)(p))
		default:
			v = *(*int64)(p)
		}
		e.buf = appendIntN(e.buf, v)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		v, ok := parseInt(s, bits)
		if !ok {
			d.r.Fail("number %q does not fit %s", s, c.t)
			return
		}
		switch bits {
		case 8:
			*(*int8)(p) = int8(v)
		case 16:
			*(*int16)(p) = int16(v)
		case 32:
			*(*int32)(p) = int32(v)
		default:
			*(*int64)(p) = v
		}
	}
}

func (c *codec) fillUint() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var v uint64
		switch bits {
		case 8:
			v = uint64(*(*uint8)(p))
		case 16:
			v = uint64(*(*uint16)(p))
		case 32:
			v = uint64(*(*uint32)(p))
		default:
			v = *(*uint64)(p)
		}
		e.buf = appendUintN(e.buf, v, false)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		v, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || f != math.Trunc(f) || f < 0 || f >= math.Ldexp(1, bits) {
				d.r.Fail("number %q does not fit %s", s, c.t)
				return
			}
			v = uint64(f)
		}
		switch bits {
		case 8:
			*(*uint8)(p) = uint8(v)
		case 16:
			*(*uint16)(p) = uint16(v)
		case 32:
			*(*uint32)(p) = uint32(v)
		default:
			*(*uint64)(p) = v
		}
	}
}

func (c *codec) fillFloat() {
	bits := c.t.Bits()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		var f float64
		if bits == 32 {
			f = float64(*(*float32)(p))
		} else {
			f = *(*float64)(p)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.fail(c.t, "%v cannot be stored as a DynamoDB number", f)
			return
		}
		e.buf = append(e.buf, byte(abi.KindN))
		var tmp [32]byte
		if bits == 64 {
			e.buf = abi.AppendBytes(e.buf, appendFloat(tmp[:0], f))
		} else {
			e.buf = abi.AppendBytes(e.buf, strconv.AppendFloat(tmp[:0], f, 'g', -1, bits))
		}
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		s, ok := c.readNumber(d, k)
		if !ok {
			return
		}
		var f float64
		var err error
		if bits == 64 {
			f, err = parseFloat(s)
		} else {
			f, err = strconv.ParseFloat(s, bits)
		}
		if err != nil {
			d.r.Fail("number %q does not fit %s", s, c.t)
			return
		}
		if bits == 32 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
	}
}

func (c *codec) fillPointer() {
	elem := buildCodec(c.t.Elem())
	et := c.t.Elem()
	c.enc = func(e *encoder, p unsafe.Pointer) {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			e.buf = append(e.buf, byte(abi.KindNULL))
			return
		}
		elem.enc(e, q)
	}
	c.dec = func(d *decoder, k abi.Kind, p unsafe.Pointer) {
		if k == abi.KindNULL {
			*(*unsafe.Pointer)(p) = nil
			return
		}
		q := reflect.New(et).UnsafePointer()
		elem.dec(d, k, q)
		*(*unsafe.Pointer)(p) = q
	}
	c.omit = func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
}

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
				d.r.Fail("number %q does not fit float64", s)
			}
			*(*float64)(q) = v
		case f.c.fast == fastInt64 && k == abi.KindN:
			s := d.r.String()
			v, ok := parseInt(s, 64)
			if !ok {
				d.r.Fail("number %q does not fit int64", s)
			}
			*(*int64)(q) = v
		case k == abi.KindNULL && f.c.t.Kind() != reflect.Pointer && f.c.t != valueType:
			typedmemclr(f.c.t, q)
		default:
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
	return d.r.End()
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
