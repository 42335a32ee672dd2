// Package guesttest tests a projection natively, as plain Go: build typed
// events, fold them through a guest.Definition the way the host folds a
// batch into an empty read model, and compare the rows with the expected
// ones, with a readable difference.
//
//	func TestOrderSummary(t *testing.T) {
//		guesttest.Check(t, ordersummary.Projection,
//			[]guesttest.Ev{
//				guesttest.Event("Order", "o-1", 1, "OrderPlaced", map[string]any{"customer": "Ada"}),
//				guesttest.Event("Order", "o-1", 2, "ItemAdded", map[string]any{"price": guest.MustDecimal("0.1")}),
//			},
//			guesttest.Row(ordersummary.RowKey("o-1"), map[string]any{"status": "placed", "total": guest.MustDecimal("0.1"), …}),
//		)
//	}
//
// The same cases can ship inside the Wasm module as its self test (see
// Case and SelfTests): the host runs them before it accepts the module.
// The package does not import "testing", so it builds for wasip1 too.
package guesttest

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Ev is an event for a test: an abi.Event and, when two sources of a
// multi-source projection read one stream, the source that reads it.
type Ev struct {
	Source string // "" for the first source reading the event's stream
	abi.Event
}

// Timestamp is the timestamp events get unless At sets one: the one the
// fixtures of `host plugin test` get when they name none (abi.TestTimestamp).
const Timestamp = abi.TestTimestamp

// Event builds version version of stream instance id of stream, of type
// typ, with data: nil, an abi.Item, a map[string]T or a struct, mapped like
// a state (a guest.Decimal or an int becomes an N, a string an S …). The
// data gets "_tag" = typ as the event store writes it. Data that cannot be
// mapped panics: it is a mistake in the test.
func Event(stream, id string, version uint64, typ string, data any) Ev {
	return Ev{Event: abi.Event{Stream: stream, StreamID: id, Version: version, Type: typ,
		Data: item(data, typ), Timestamp: Timestamp}}
}

// From returns e read by the named source.
func (e Ev) From(source string) Ev { e.Source = source; return e }

// At returns e with an ISO-8601 timestamp.
func (e Ev) At(timestamp string) Ev { e.Timestamp = timestamp; return e }

// WithMetadata returns e with metadata, mapped like data.
func (e Ev) WithMetadata(meta any) Ev { e.Metadata = item(meta, ""); return e }

func item(v any, tag string) abi.Item {
	var it abi.Item
	switch d := v.(type) {
	case nil:
	case abi.Item:
		it = make(abi.Item, len(d)+1)
		for k, x := range d {
			it[k] = x
		}
	default:
		var err error
		if it, err = guest.ToItem(v); err != nil {
			panic(fmt.Sprintf("guesttest: event data %T: %v", v, err))
		}
	}
	if tag != "" {
		if it == nil {
			it = abi.Item{}
		}
		if _, ok := it["_tag"]; !ok {
			it["_tag"] = abi.S(tag)
		}
	}
	return it
}

// Row builds an expected row: the key's attributes plus v mapped to an item
// (a struct, a map[string]T or an abi.Item), as the host stores it, without
// the host's own attributes (checkpoint, createdAt). Unmappable values panic.
func Row(key guest.Key, v any) abi.Item {
	it := item(v, "")
	if it == nil {
		it = abi.Item{}
	}
	for k, x := range key {
		it[k] = x
	}
	return it
}
