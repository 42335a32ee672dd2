// Package guest is the Go SDK for dynafold projection plugins. Authors write a
// projection's domain logic as typed Go — a Projection (one source stream) or
// a MultiProjection (several) — and never touch pointers or encodings:
//
//	var Orders = guest.Projection[OrderSummary]{
//		Name: "order-summary", Version: "1.0.0",
//		Stream: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded"},
//		Key:     func(streamID string, e guest.Event) (guest.Key, bool) { ... },
//		Initial: func(streamID string, e guest.Event) OrderSummary { ... },
//		Evolve:  func(s OrderSummary, e guest.Event) (OrderSummary, error) { ... },
//	}
//
// The same value runs natively (New returns an abi.Handler, which
// host/logic.Native runs in process) and as a WebAssembly module: a package
// main built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared that calls
// Register in an init function gets the ABI's exports from this package.
//
// Event data is read into typed values with Event.Decode (a struct, mapped
// like state), or one attribute at a time with Event.Str, Num, Float, Int and
// Bool, the cheapest way to read a hot attribute. Evolve returns the next
// state, or the sentinels Skip and RemoveRow, or a domain error: build one
// with Errorf(tag, ...) or any error type with a Tag() string method;
// Terminal decides by tag (HasTag).
//
// State types are Go structs mapped to and from the row's attributes: the
// attribute name is the field's `ddb:"name"` tag, else the Go name with its
// first letter lower-cased; `ddb:"-"` ignores a field. Strings map to S;
// ints, uints and floats to N (floats in their shortest form, 'g' -1);
// Decimal to N exactly (an exact decimal with arithmetic: use it for money
// and sums, never float64); Number to N kept as exact decimal text; bool to BOOL; []byte to B; structs
// and map[string]T to M; other slices to L; abi.Value as is; any to natural Go
// values. Nil pointers, slices, maps and byte slices are stored as absent
// attributes; NULL reads as the zero value. Embedded structs are flattened.
// Types are mapped by reflection once, then by field offsets; the common
// kinds (string, Number, int64, float64, bool) are handled inline.
//
// Inside a Wasm module, strings read from a request (an event's fields and
// data, the state as read) share the module's input buffer, which the next
// call overwrites: use them freely during the call (in the state, keys,
// items, effects), but copy one (strings.Clone) before keeping it in a
// global. Projections should keep nothing in globals anyway: the host may
// call any instance, in any order.
//
// Log and Logf send a message to the host's log, when the operator enabled
// guest logging for the plugin (rate-limited; discarded otherwise). Only a
// module that calls them imports the host function they use.
package guest

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// Key is a row's primary key attributes, as stored.
type Key = abi.Item

// StringKey returns a Key of string attributes from name, value pairs:
// StringKey("pk", "OrderSummary#o-1", "sk", "OrderSummary").
func StringKey(pairs ...string) Key {
	k := make(Key, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		k[pairs[i]] = abi.S(pairs[i+1])
	}
	return k
}

// Event is one event of a stream, as a plugin sees it. Its data is decoded
// on demand, into a typed value with Decode.
type Event struct {
	Stream    string // the stream's name, e.g. "Order"
	StreamID  string // the stream instance (its composites joined with '#')
	Version   uint64 // the stream version, from 1
	Type      string // the event type (the data's _tag)
	Timestamp string // ISO-8601, as stored
	data      string // encoded optional item ("" when absent)
	meta      string
	comp      composite // the source's declared composite fields (StreamKey)
}

// NewEvent returns the Event of an abi.Event, for tests of domain code.
func NewEvent(e abi.Event) Event {
	return Event{Stream: e.Stream, StreamID: e.StreamID, Version: e.Version, Type: e.Type,
		Timestamp: e.Timestamp, data: string(abi.AppendOptItem(nil, e.Data)),
		meta: string(abi.AppendOptItem(nil, e.Metadata))}
}

// Decode maps the event's data attributes into v, a pointer to a struct (or
// to a map[string]T): attributes without a field are ignored, fields
// without an attribute keep their value. An attribute v cannot hold (of
// another kind, or a number out of its range) is an *EventDataError.
func (e Event) Decode(v any) error { return eventDataError("data", decodeInto(e.data, v)) }

// DecodeMetadata maps the event's metadata into v, like Decode.
func (e Event) DecodeMetadata(v any) error { return eventDataError("metadata", decodeInto(e.meta, v)) }

// EventDataError reports an event whose data (or metadata) does not match
// the type Decode maps it into: the event is well formed, but an attribute
// is of another kind than its field, or a number the field cannot hold.
// The Rust and C SDKs word it the same.
type EventDataError struct {
	Part   string // "data" or "metadata"
	Reason string // e.g. `attribute "qty": cannot decode S into int64`
}

// Error implements error: `event data: attribute "qty": cannot decode S
// into int64 (the event's data does not match the plugin's type)`.
func (e *EventDataError) Error() string {
	return "event " + e.Part + ": " + e.Reason + " (the event's " + e.Part + " does not match the plugin's type)"
}

// eventDataError words a decoding's mismatch as an *EventDataError; other
// errors (malformed input, an unsupported type) are returned as they are.
func eventDataError(part string, err error) error {
	if m, ok := err.(*mismatchError); ok {
		return &EventDataError{Part: part, Reason: m.reason}
	}
	return err
}

// StateDataError reports a row whose stored state does not match the
// plugin's state type: the state is well formed, but an attribute is of
// another kind than its field, or a number the field cannot hold (a row
// written by another version of the plugin, or edited by hand). The Rust
// and C SDKs word it the same.
type StateDataError struct {
	Reason string // e.g. `attribute "items": number "1e400" does not fit int64`
}

// Error implements error: `attribute "items": number "1e400" does not fit
// int64 (the row's stored state does not match the plugin's type: ...)`.
func (e *StateDataError) Error() string { return e.Reason + stateDataHint }

// stateDataHint ends a StateDataError's message; the other SDKs and the
// AssemblyScript examples end theirs with the same words.
const stateDataHint = " (the row's stored state does not match the plugin's type:" +
	" a row written by another version of the plugin or edited by hand; rebuild the row)"

// stateDataError words a decoding's mismatch as a *StateDataError; other
// errors (malformed input) are returned as they are.
func stateDataError(err error) error {
	if m, ok := err.(*mismatchError); ok {
		return &StateDataError{Reason: m.reason}
	}
	return err
}

// Data returns the event's data as an item (nil when absent).
func (e Event) Data() abi.Item {
	it, _ := abi.DecodeOptItem([]byte(e.data))
	return it
}

// Metadata returns the event's metadata (nil when absent).
func (e Event) Metadata() abi.Item {
	it, _ := abi.DecodeOptItem([]byte(e.meta))
	return it
}

func decodeInto(raw string, v any) error {
	// Only the type word is read before the codec lookup, which may grow
	// (and so move) the stack; the data word, which may point into the
	// caller's frame, is read after it.
	typ := (*eface)(noescape(unsafe.Pointer(&v))).typ
	var c *codec
	if e := recent[(uintptr(typ)>>5)%uintptr(len(recent))].Load(); e != nil && e.typ == typ {
		c = e.c
	} else {
		c = elemCodec(typ)
	}
	err := decodeWith(raw, c, (*eface)(noescape(unsafe.Pointer(&v))))
	runtime.KeepAlive(v) // v stays live, so a moved stack adjusts its data word
	return err
}

func decodeWith(raw string, c *codec, ef *eface) error {
	if c == nil || ef.data == nil {
		return &MappingError{Type: typeName(ef.typ), Reason: "Decode needs a non-nil pointer"}
	}
	if raw == "" {
		return nil
	}
	if c.entries == nil {
		return decodeOptItem(raw, c, noescape(ef.data))
	}
	var d decoder
	d.r.Reset(raw)
	n, ok := d.r.SmallUvarint()
	if !ok {
		return decodeOptItem(raw, c, noescape(ef.data))
	}
	if n > 0 {
		c.entries((*decoder)(noescape(unsafe.Pointer(&d))), int(n-1), noescape(ef.data))
	}
	if d.r.Offset() == len(raw) && d.r.Err() == nil {
		return nil
	}
	return d.end()
}

// typeOf returns the reflect.Type of an interface's type word.
func typeOf(typ unsafe.Pointer) reflect.Type {
	if typ == nil {
		return nil
	}
	var v any
	(*eface)(unsafe.Pointer(&v)).typ = typ
	return reflect.TypeOf(v)
}

func typeName(typ unsafe.Pointer) string {
	if t := typeOf(typ); t != nil {
		return t.String()
	}
	return "nil"
}

type eface struct {
	typ, data unsafe.Pointer
}

// byPtrType caches, by the type word of a pointer type *T, the codec of T;
// copy-on-write, so lookups take no lock and allocate nothing.
var byPtrType atomic.Pointer[map[unsafe.Pointer]*codec]

func elemCodec(typ unsafe.Pointer) *codec {
	slot := &recent[(uintptr(typ)>>5)%uintptr(len(recent))]
	if e := slot.Load(); e != nil && e.typ == typ {
		return e.c
	}
	c := elemCodecSlow(typ)
	if c != nil {
		slot.Store(&recentCodec{typ: typ, c: c})
	}
	return c
}

// typeCodec returns the codec of the type whose type word is typ, and
// whether values of the type are stored directly in an interface's data
// word (pointer-shaped types).
func typeCodec(typ unsafe.Pointer) (*codec, bool) {
	slot := &recentTypes[(uintptr(typ)>>5)%uintptr(len(recentTypes))]
	if e := slot.Load(); e != nil && e.typ == typ {
		return e.c, e.direct
	}
	t := typeOf(typ)
	c := codecFor(t)
	direct := pointerShaped(t)
	slot.Store(&recentCodec{typ: typ, c: c, direct: direct})
	return c, direct
}

// pointerShaped reports whether an interface stores a value of type t in its
// data word rather than a pointer to it.
func pointerShaped(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && t.Size() == unsafe.Sizeof(uintptr(0)) && pointerShaped(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && pointerShaped(t.Elem())
	}
	return false
}

var recentTypes [16]atomic.Pointer[recentCodec]

// recent is a small direct-mapped cache in front of byPtrType.
var recent [16]atomic.Pointer[recentCodec]

type recentCodec struct {
	typ    unsafe.Pointer
	c      *codec
	direct bool
}

func elemCodecSlow(typ unsafe.Pointer) *codec {
	if m := byPtrType.Load(); m != nil {
		if c, ok := (*m)[typ]; ok {
			return c
		}
	}
	t := typeOf(typ)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil
	}
	c := codecFor(t.Elem())
	buildMu.Lock()
	defer buildMu.Unlock()
	next := map[unsafe.Pointer]*codec{}
	if m := byPtrType.Load(); m != nil {
		for k, x := range *m {
			next[k] = x
		}
	}
	next[typ] = c
	byPtrType.Store(&next)
	return c
}

// noescape hides p from escape analysis, so values decoded into stay on the
// caller's stack. The decoders never keep p after they return.
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p) ^ 0
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}

// Skip, returned by Evolve as its error, leaves the row alone: the event is
// reported skipped and the state is unchanged.
var Skip = errors.New("guest: skip event")

// RemoveRow, returned by Evolve as its error, removes the row: it becomes a
// tombstone, and a later event starts again from Initial.
var RemoveRow = errors.New("guest: remove row")

// Error is a typed domain error: its Tag names its type ("ZoneNotPlaced")
// and travels to the host, where terminal decisions and reports use it.
type Error = abi.Error

// Errorf returns a typed domain error with the given tag.
func Errorf(tag, format string, args ...any) error {
	return &abi.Error{Tag: tag, Message: fmt.Sprintf(format, args...)}
}

// Tagged is implemented by domain error types that name their tag.
type Tagged interface {
	error
	Tag() string
}

// TagOf returns the tag of err: an *Error's Tag, a Tagged error's Tag(), or
// "Error" for any other error ("" for nil).
func TagOf(err error) string {
	return toABIError(err).Tag
}

// HasTag reports whether err's tag is tag. Terminal functions should decide
// by tag, as the terminal export receives the error as an *Error.
func HasTag(err error, tag string) bool { return err != nil && TagOf(err) == tag }

func toABIError(err error) *abi.Error {
	if err == nil {
		return &abi.Error{}
	}
	var ae *abi.Error
	if errors.As(err, &ae) {
		return ae
	}
	var t Tagged
	if errors.As(err, &t) {
		return &abi.Error{Tag: t.Tag(), Message: err.Error()}
	}
	return &abi.Error{Tag: "Error", Message: err.Error()}
}

// ItemContext is what ToItem knows besides the state.
type ItemContext struct {
	StreamID string // single-source: the stream instance
	key      lazyKey
	comp     composite
}

// Key returns the row's key.
func (c ItemContext) Key() Key { return c.key.get() }

// SourceContext is what a multi-source Evolve knows besides state and event.
type SourceContext struct {
	Source   string // the source's name
	StreamID string // the event's stream instance
	comp     composite
}

// EffectContext is what Effects knows besides the event and the new state.
type EffectContext struct {
	Source   string
	StreamID string
	key      lazyKey
	comp     composite
}

// Key returns the row's key.
func (c EffectContext) Key() Key { return c.key.get() }

// lazyKey is a row key decoded on first use (most calls never use it).
type lazyKey struct {
	raw     string // encoded optional item
	decoded *Key
}

func newLazyKey(k Key) lazyKey { return lazyKey{decoded: &k} }

func (l lazyKey) get() Key {
	if l.decoded != nil {
		return *l.decoded
	}
	if l.raw == "" {
		return nil
	}
	var r abi.Reader
	r.Reset(l.raw)
	return r.OptItem()
}
