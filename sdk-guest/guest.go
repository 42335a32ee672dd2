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
// State types are Go structs mapped to and from the row's attributes: the
// attribute name is the field's `ddb:"name"` tag, else the Go name with its
// first letter lower-cased; `ddb:"-"` ignores a field. Strings map to S;
// ints, uints and floats to N (floats in their shortest form, 'g' -1);
// Number to N kept as exact decimal text; bool to BOOL; []byte to B; structs
// and map[string]T to M; other slices to L; abi.Value as is; any to natural Go
// values. Nil pointers, slices, maps and byte slices are stored as absent
// attributes; NULL reads as the zero value. Embedded structs are flattened.
package guest

import (
	"errors"
	"fmt"
	"reflect"

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
}

// NewEvent returns the Event of an abi.Event, for tests of domain code.
func NewEvent(e abi.Event) Event {
	return Event{Stream: e.Stream, StreamID: e.StreamID, Version: e.Version, Type: e.Type,
		Timestamp: e.Timestamp, data: string(abi.AppendOptItem(nil, e.Data)),
		meta: string(abi.AppendOptItem(nil, e.Metadata))}
}

// Decode maps the event's data attributes into v, a pointer to a struct (or
// to a map[string]T): attributes without a field are ignored, fields
// without an attribute keep their value.
func (e Event) Decode(v any) error { return decodeInto(e.data, v) }

// DecodeMetadata maps the event's metadata into v, like Decode.
func (e Event) DecodeMetadata(v any) error { return decodeInto(e.meta, v) }

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
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &MappingError{Type: fmt.Sprintf("%T", v), Reason: "Decode needs a non-nil pointer"}
	}
	if raw == "" {
		return nil
	}
	return decodeOptItem(raw, codecFor(rv.Type().Elem()), rv.UnsafePointer())
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
	Key      Key    // the row's key
}

// SourceContext is what a multi-source Evolve knows besides state and event.
type SourceContext struct {
	Source   string // the source's name
	StreamID string // the event's stream instance
}

// EffectContext is what Effects knows besides the event and the new state.
type EffectContext struct {
	Source   string
	StreamID string
	Key      Key
}
