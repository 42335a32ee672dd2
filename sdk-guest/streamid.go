package guest

import (
	"fmt"
	"strings"
)

// StreamIDSeparator joins the composite values of a stream id.
const StreamIDSeparator = "#"

// StreamIDError is a stream id that does not split into the composite
// fields declared for its stream (or a stream whose composite fields the
// projection did not declare).
type StreamIDError struct {
	StreamID  string
	Composite []string
	Problem   string
}

// Error implements error.
func (e *StreamIDError) Error() string {
	return fmt.Sprintf("guest: stream id %q (composite %q): %s", e.StreamID, e.Composite, e.Problem)
}

// ParseStreamID splits a stream id into its composite values, keyed by
// field, as the host joins them: a single-field id is taken whole (it may
// contain '#'); a multi-field id must split on '#' into exactly
// len(composite) non-empty values (a value containing '#' is ambiguous and
// could not have been appended).
func ParseStreamID(id string, composite ...string) (map[string]string, error) {
	if len(composite) == 0 {
		return nil, &StreamIDError{StreamID: id, Problem: "no composite fields declared: set Composite on the projection or source (the names of the stream's composite in the host's configuration)"}
	}
	parts := []string{id}
	if len(composite) > 1 {
		parts = strings.Split(id, StreamIDSeparator)
	}
	if len(parts) != len(composite) {
		return nil, &StreamIDError{StreamID: id, Composite: composite,
			Problem: fmt.Sprintf("has %d parts, want %d; a value containing %q is ambiguous", len(parts), len(composite), StreamIDSeparator)}
	}
	out := make(map[string]string, len(parts))
	for i, p := range parts {
		if p == "" {
			return nil, &StreamIDError{StreamID: id, Composite: composite, Problem: fmt.Sprintf("the value of %q is empty", composite[i])}
		}
		out[composite[i]] = p
	}
	return out, nil
}

// composite is the declared composite fields of a source, shared by the
// events and contexts of its calls (nil: none declared).
type composite = *[]string

func parseWith(id string, c composite) (map[string]string, error) {
	var names []string
	if c != nil {
		names = *c
	}
	return ParseStreamID(id, names...)
}

// StreamKey returns the event's stream id split into its composite fields
// (field → value), with the Composite its projection or source declares.
func (e Event) StreamKey() (map[string]string, error) { return parseWith(e.StreamID, e.comp) }

// WithComposite returns e with the composite fields StreamKey splits its
// stream id by: for tests of domain code built with NewEvent.
func (e Event) WithComposite(names ...string) Event {
	e.comp = &names
	return e
}

// StreamKey returns the context's stream id split into the source's
// composite fields.
func (c SourceContext) StreamKey() (map[string]string, error) { return parseWith(c.StreamID, c.comp) }

// StreamKey returns the context's stream id split into the source's
// composite fields.
func (c EffectContext) StreamKey() (map[string]string, error) {
	return parseWith(c.StreamID, c.comp)
}

// StreamKey returns the row's stream id (single-source) split into the
// projection's composite fields.
func (c ItemContext) StreamKey() (map[string]string, error) { return parseWith(c.StreamID, c.comp) }
