// Package eventstore is dynafold's event store on DynamoDB: stream definitions with composite stream ids, the item layout
// (compatible with the effect-dynamodb EventStore by default), appends as one
// transaction with a version-contiguity check, strongly consistent reads, and
// the decoder that recognises event items in change-feed images.
package eventstore

import (
	"fmt"
	"strings"
)

// IDSeparator joins the composites of a stream id.
const IDSeparator = "#"

// Stream defines an event stream.
type Stream struct {
	// Name is the stream's name, e.g. "Order". The layout derives the keys
	// and the __edd_e__ marker from it.
	Name string
	// EventTypes lists the event types (the data's _tag) the stream holds.
	// When set, appends and decodes of other types are refused.
	EventTypes []string
	// Composite names the fields of a stream id, e.g. ["orderId"] or
	// ["tenantId", "orderId"]. A stream id is their values joined with '#'.
	Composite []string
}

// Validate reports a definition that cannot work.
func (s Stream) Validate() error {
	if s.Name == "" {
		return &ValidationError{Stream: s.Name, Field: "Name", Problem: "a stream needs a name"}
	}
	if len(s.Composite) == 0 {
		return &ValidationError{Stream: s.Name, Field: "Composite", Problem: "a stream needs at least one composite field for its stream id"}
	}
	seen := map[string]bool{}
	for _, f := range s.Composite {
		if f == "" || seen[f] {
			return &ValidationError{Stream: s.Name, Field: "Composite", Problem: fmt.Sprintf("composite fields must be non-empty and distinct, got %q", s.Composite)}
		}
		seen[f] = true
	}
	return nil
}

// HasEventType reports whether the stream declares type t (any type when
// EventTypes is empty).
func (s Stream) HasEventType(t string) bool {
	if len(s.EventTypes) == 0 {
		return true
	}
	for _, e := range s.EventTypes {
		if e == t {
			return true
		}
	}
	return false
}

// JoinID builds a stream id from its composite values, in Composite order.
// On a multi-field id a value containing '#' is ambiguous and fails with a
// *ValidationError, as does an empty value or a wrong number of values.
func (s Stream) JoinID(values ...string) (string, error) {
	if len(values) != len(s.Composite) {
		return "", &ValidationError{Stream: s.Name, Field: "streamId",
			Problem: fmt.Sprintf("want %d composite values %q, got %d", len(s.Composite), s.Composite, len(values))}
	}
	for i, v := range values {
		if v == "" {
			return "", &ValidationError{Stream: s.Name, Field: s.Composite[i], Problem: "composite value is empty"}
		}
		if len(values) > 1 && strings.Contains(v, IDSeparator) {
			return "", &ValidationError{Stream: s.Name, Field: s.Composite[i],
				Problem: fmt.Sprintf("value %q contains %q, which is ambiguous in a multi-field stream id", v, IDSeparator)}
		}
	}
	return strings.Join(values, IDSeparator), nil
}

// ID builds a stream id from a map of composite field to value.
func (s Stream) ID(fields map[string]string) (string, error) {
	values := make([]string, len(s.Composite))
	for i, f := range s.Composite {
		v, ok := fields[f]
		if !ok {
			return "", &ValidationError{Stream: s.Name, Field: f, Problem: "composite field missing"}
		}
		values[i] = v
	}
	return s.JoinID(values...)
}

// ParseID splits a stream id back into its composite values, keyed by field.
// A single-field id is taken whole (it may contain '#'); a multi-field id must
// split into exactly len(Composite) non-empty parts, else *ValidationError.
func (s Stream) ParseID(id string) (map[string]string, error) {
	parts := []string{id}
	if len(s.Composite) > 1 {
		parts = strings.Split(id, IDSeparator)
	}
	if len(parts) != len(s.Composite) {
		return nil, &ValidationError{Stream: s.Name, Field: "streamId",
			Problem: fmt.Sprintf("stream id %q has %d parts, want %d (%q); a value containing %q is ambiguous",
				id, len(parts), len(s.Composite), s.Composite, IDSeparator)}
	}
	out := make(map[string]string, len(parts))
	for i, p := range parts {
		if p == "" {
			return nil, &ValidationError{Stream: s.Name, Field: s.Composite[i], Problem: fmt.Sprintf("stream id %q: composite value is empty", id)}
		}
		out[s.Composite[i]] = p
	}
	return out, nil
}

// checkStreamID is ParseID's validation without building the map: a
// multi-field id must have len(Composite) non-empty parts.
func checkStreamID(s Stream, id string) error {
	if len(s.Composite) < 2 {
		return nil
	}
	if strings.Count(id, IDSeparator) == len(s.Composite)-1 && !strings.HasPrefix(id, IDSeparator) &&
		!strings.HasSuffix(id, IDSeparator) && !strings.Contains(id, IDSeparator+IDSeparator) {
		return nil
	}
	_, err := s.ParseID(id)
	return err
}
