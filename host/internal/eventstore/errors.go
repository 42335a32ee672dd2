package eventstore

import (
	"errors"
	"fmt"
)

// Sentinels matched (errors.Is) by the typed errors of this package.
var (
	// ErrValidation is matched by *ValidationError.
	ErrValidation = errors.New("eventstore: validation error")
	// ErrVersionConflict is matched by *VersionConflict.
	ErrVersionConflict = errors.New("eventstore: version conflict")
	// ErrAppendTooLarge is matched by *AppendTooLargeError.
	ErrAppendTooLarge = errors.New("eventstore: append too large")
	// ErrDecode is matched by *DecodeError.
	ErrDecode = errors.New("eventstore: event item does not decode")
	// ErrConfig is matched by *ConfigError.
	ErrConfig = errors.New("eventstore: configuration error")
)

// ValidationError is an invalid stream definition, stream id or event.
type ValidationError struct {
	Stream  string // the stream's name
	Field   string // the field, composite or attribute at fault
	Problem string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("eventstore: stream %q: %s: %s", e.Stream, e.Field, e.Problem)
}

// Is matches ErrValidation.
func (e *ValidationError) Is(target error) bool { return target == ErrValidation }

// VersionConflict is an append whose expected version was not the stream's
// head: another append got there first, or the caller's view is stale (or
// ahead). Re-read the stream and decide again.
type VersionConflict struct {
	Stream   string
	StreamID string
	Expected uint64
	Err      error // the underlying transaction error
}

// Error implements error.
func (e *VersionConflict) Error() string {
	return fmt.Sprintf("eventstore: version conflict on %s %q: expected version %d is not the head", e.Stream, e.StreamID, e.Expected)
}

// Is matches ErrVersionConflict.
func (e *VersionConflict) Is(target error) bool { return target == ErrVersionConflict }

// Unwrap returns the underlying transaction error.
func (e *VersionConflict) Unwrap() error { return e.Err }

// AppendTooLargeError is an append that would need more items than one
// TransactWriteItems allows. Appends are never split (that would break their
// atomicity): append fewer events at a time.
// One item checks the expected version of an append to an existing stream
// (expectedVersion > 0), so it takes one event fewer than a new stream.
type AppendTooLargeError struct {
	Stream    string
	StreamID  string
	Events    int // the events appended
	MaxEvents int // the most events this append may hold
	Count     int // the transaction items the append needs
	Limit     int // the most items of one transaction
}

// Error implements error.
func (e *AppendTooLargeError) Error() string {
	return fmt.Sprintf("eventstore: append of %d events to %s %q is over the limit of %d events (%d to a new stream, %d to an existing one: one of DynamoDB's %d transaction items checks the expected version); append fewer events at a time",
		e.Events, e.Stream, e.StreamID, e.MaxEvents, e.Limit, e.Limit-1, e.Limit)
}

// Is matches ErrAppendTooLarge.
func (e *AppendTooLargeError) Is(target error) bool { return target == ErrAppendTooLarge }

// DecodeError is an item marked as an event of a stream that is not a valid
// event: Attribute names what is wrong, Hint what to do.
type DecodeError struct {
	Stream    string // the stream the marker names
	PK, SK    string // the item's keys, when readable
	Attribute string
	Problem   string
	Hint      string
	Err       error // the underlying error, if any (e.g. *UnknownCodecError)
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Error implements error.
func (e *DecodeError) Error() string {
	s := fmt.Sprintf("eventstore: event item of stream %q", e.Stream)
	if e.PK != "" || e.SK != "" {
		s += fmt.Sprintf(" (pk %q, sk %q)", e.PK, e.SK)
	}
	s += fmt.Sprintf(" does not decode: attribute %q %s", e.Attribute, e.Problem)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Is matches ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// ConfigError is a set of stream definitions that cannot work together, such
// as two streams storing events under one marker ([EDD-9082]).
type ConfigError struct {
	Code    string // e.g. "EDD-9082"
	Message string
}

// Error implements error.
func (e *ConfigError) Error() string {
	if e.Code == "" {
		return "eventstore: " + e.Message
	}
	return "[" + e.Code + "] eventstore: " + e.Message
}

// Is matches ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
