package guest

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"
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
	// field is the attribute being decoded into a struct field (the
	// innermost), named by a mismatch.
	field string
	// mis is the first failure's reason when it was a value that does not
	// fit its Go type (the input itself well formed), for mismatchError.
	mis string
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
	numberType  = reflect.TypeOf(Number(""))
	decimalType = reflect.TypeOf(Decimal{})
	valueType   = reflect.TypeOf(abi.Value{})
	bytesType   = reflect.TypeOf([]byte(nil))
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

// notFit fails the decoding of number s, which type t cannot hold, naming
// the attribute it is in when there is one.
func (d *decoder) notFit(field, s string, t any) {
	if field != "" {
		d.misfit(fmt.Sprintf("attribute %q: number %q does not fit %s", field, s, t))
		return
	}
	d.misfit(fmt.Sprintf("number %q does not fit %s", s, t))
}

func (c *codec) mismatch(d *decoder, k abi.Kind) {
	if d.field != "" {
		d.misfit(fmt.Sprintf("attribute %q: cannot decode %s into %s", d.field, k, c.t))
		return
	}
	d.misfit(fmt.Sprintf("cannot decode %s into %s", k, c.t))
}

// misfit fails the decoding for a value its Go type cannot hold, keeping
// the reason when it is the first failure.
func (d *decoder) misfit(reason string) {
	if d.r.Err() == nil {
		d.mis = reason
	}
	d.r.Fail("%s", reason)
}

// end returns the decoding's error: a *mismatchError when the first failure
// was a value its Go type cannot hold.
func (d *decoder) end() error {
	err := d.r.End()
	if err != nil && d.mis != "" {
		return &mismatchError{reason: d.mis, err: err}
	}
	return err
}

// mismatchError is well-formed input with a value its Go type cannot hold
// (of another kind, or a number out of range). It reads as the ABI's
// decoding error (err, with the offset); Event.Decode words it as the
// event's data not matching the plugin's type.
type mismatchError struct {
	reason string // e.g. `attribute "qty": cannot decode S into int64`
	err    error
}

func (e *mismatchError) Error() string { return e.err.Error() }
func (e *mismatchError) Unwrap() error { return e.err }

func (c *codec) fill() {
	t := c.t
	switch {
	case t == decimalType:
		c.fillDecimal()
		return
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
