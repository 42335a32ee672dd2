package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// Errors of the event store, matched with errors.Is.
var (
	// ErrVersionConflict is matched by an append whose expected version was
	// not the stream's head: read the stream again and decide again.
	ErrVersionConflict = eventstore.ErrVersionConflict
	// ErrUnknownStream is matched by a call naming a stream the
	// configuration's eventStore.streams does not define.
	ErrUnknownStream = errors.New("unknown stream")
	// ErrInvalidEvent is matched by an append of an invalid event: a stream
	// id that does not split into the stream's composite (a value holding
	// '#' in a multi-field id, a missing or empty value), an event type
	// the stream does not declare, or an event whose item would be over
	// DynamoDB's 400 KB item limit (the error names the event by its index
	// in the append and its type, and its size).
	ErrInvalidEvent = eventstore.ErrValidation
	// ErrAppendTooLarge is matched by an append of more events than one
	// transaction holds: 100 to a new stream (expectedVersion 0), 99 to an
	// existing one.
	ErrAppendTooLarge = eventstore.ErrAppendTooLarge
	// ErrEventDecode is matched by the error of an event item that is not
	// a valid event, wherever it is read: a change-feed record's (in
	// Result.DecodeFailures), a gap-fill read's (the row's, or in a row
	// several instances feed, the instance's), a read, capture or repair.
	ErrEventDecode = eventstore.ErrDecode
	// ErrEventItemKey is matched (besides ErrEventDecode) by the error of
	// an event item stored under another key than the one the layout
	// derives from its streamId and version: a hand-written item, a
	// migration's or another writer's. It is never folded.
	ErrEventItemKey = eventstore.ErrKeyMismatch
)

// NewEvent is an event to append.
type NewEvent struct {
	Type     string   // the event type; taken from Data's _tag when empty
	Data     abi.Item // the event's data; its _tag is set to Type
	Metadata abi.Item // optional
}

// Append appends events to a stream instance whose head is expectedVersion
// (0 for a new stream), as versions expectedVersion+1, ..., in one
// transaction that also checks the versions stay contiguous. A stale
// expectedVersion fails with ErrVersionConflict. It returns the events as
// stored.
//
// One append holds at most 100 events to a new stream and 99 to an
// existing one (expectedVersion > 0), since one of the transaction's 100
// items checks the expected version; more fail with ErrAppendTooLarge,
// unsent. An event whose item would be over DynamoDB's 400 KB item limit
// fails with ErrInvalidEvent, unsent: pack large data with
// eventStore.compression (docs/EVENTS.md) or keep it out of the event.
func (h *Host) Append(ctx context.Context, stream, streamID string, expectedVersion uint64, events ...NewEvent) ([]abi.Event, error) {
	s, err := h.stream(stream)
	if err != nil {
		return nil, err
	}
	evs := make([]eventstore.NewEvent, len(events))
	for i, e := range events {
		evs[i] = eventstore.NewEvent(e)
	}
	return h.es.Append(ctx, s, streamID, expectedVersion, evs...)
}

// Head returns a stream instance's latest version (0: no event yet).
func (h *Host) Head(ctx context.Context, stream, streamID string) (uint64, error) {
	s, err := h.stream(stream)
	if err != nil {
		return 0, err
	}
	return h.es.Head(ctx, s, streamID)
}

// ReadStream returns a stream instance's events after version after, up to
// version to (0: to the head), in version order, with a strongly
// consistent read.
func (h *Host) ReadStream(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	s, err := h.stream(stream)
	if err != nil {
		return nil, err
	}
	return h.es.ReadFrom(ctx, s, streamID, after, to)
}

func (h *Host) stream(name string) (eventstore.Stream, error) {
	s, ok := h.streams[name]
	if !ok {
		names := make([]string, 0, len(h.cfg.EventStore.Streams))
		for _, sc := range h.cfg.EventStore.Streams {
			names = append(names, sc.Name)
		}
		return s, fmt.Errorf("%w %q: the configuration's eventStore.streams defines %v", ErrUnknownStream, name, names)
	}
	return s, nil
}

// EventItem returns the item the event store holds for ev: what the NewImage
// of its INSERT record in the change feed carries (its data packed when
// eventStore.compression says so; unpacked if the codec fails).
func (h *Host) EventItem(ev abi.Event) abi.Item {
	it, err := h.es.Item(ev)
	if err != nil {
		return h.es.Layout().Item(ev)
	}
	return it
}

// EventItemsError is the error of a scan of the event table for a stream's
// instances (a backfill's, RebuildWrittenBy's, a capture of every
// instance) that met items marked as the stream's events whose streamId or
// version does not read, or whose key is not the one the layout derives
// from them. They are left out: the scan's other instances are still
// found (and rebuilt, or captured). Each of Items matches ErrEventDecode,
// and those under another key ErrEventItemKey.
type EventItemsError struct {
	Stream string
	Items  []error
}

// Error names how many items, and the first.
func (e *EventItemsError) Error() string {
	return fmt.Sprintf("%d items of the event table marked as %s events are not valid events and were left out (first: %v)", len(e.Items), e.Stream, e.Items[0])
}

// Unwrap returns the items' errors.
func (e *EventItemsError) Unwrap() []error { return e.Items }

// eventItems collects the items a scan of stream's instances leaves out.
type eventItems struct {
	layout eventstore.Layout
	stream eventstore.Stream
	mu     sync.Mutex
	bad    []error
}

// check reports whether it is an event item of the stream whose key agrees
// with its streamId and version, and keeps its error when not.
func (c *eventItems) check(it abi.Item) bool {
	err := c.layout.CheckKey(c.stream, it)
	if err == nil {
		return true
	}
	c.mu.Lock()
	c.bad = append(c.bad, err)
	c.mu.Unlock()
	return false
}

// err is the *EventItemsError of the items left out; nil when none was.
func (c *eventItems) err() error {
	if len(c.bad) == 0 {
		return nil
	}
	return &EventItemsError{Stream: c.stream.Name, Items: c.bad}
}
