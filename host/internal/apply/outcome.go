package apply

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
)

// Input is one decoded event handed to ApplyBatch.
type Input struct {
	Source string    // the source that reads it; "" routes it to every source of its stream
	Event  abi.Event // the event
	Pos    int       // its record's position in the batch; -1 when it has none
}

// Rejection is an event that evolve failed and terminal accepted.
type Rejection struct {
	Event abi.Event
	Error *abi.Error
}

// Instance is the outcome for one source instance of a row.
type Instance struct {
	Source         string
	StreamID       string
	Applied        []abi.Event // version order, gap-filled ones included
	AlreadyApplied []abi.Event // the batch's events the row already had
	Skipped        []abi.Event
	Rejected       []Rejection
	// Superseded are, in latest mode, the events older than the one
	// applied: never folded, covered by the checkpoint (version order).
	Superseded []abi.Event
	Version    uint64 // the instance's checkpoint after the call
	Positions  []int  // record positions of the instance's batch events, ascending
	Err        error  // set when this instance failed
}

// Outcome is what happened to one row in one call: Applied (Err nil) or
// Failed (Err set).
type Outcome struct {
	Key       abi.Item   // the row's key
	Instances []Instance // one per source instance with events in the call; on a catch-up, every instance caught up (those at the head with the checkpoint read)
	State     abi.Item   // the row after the call (as written, or as read when nothing was written)
	Written   bool       // the call wrote the row
	// Removed: the row is a tombstone after the call (State is nil). With
	// Written, this call removed it (evolve returned removeRow); without,
	// it was one already and stays one.
	Removed  bool
	Revision int64 // the row's revision after the call (0 without revision)
	Attempts int   // write attempts (1 + lost races, + 1 when Existed)
	// Existed: the row was taken for a new one (its events began each of
	// its streams) and written without a read, but it was there: that
	// write's condition failed (not a race), and the row was read and
	// applied as usual (fresh.go).
	Existed   bool
	Positions []int // record positions of the row's batch events, ascending
	// Err is set when the row failed: nothing was written, except that a
	// run whose effects do not fit one transaction is written in steps,
	// and those written before the failure stay (the row's checkpoints
	// are then at the last of them).
	Err error
	// Enqueued is the number of effects this call committed to the row's
	// outbox with its write; Delivered and Undelivered what the drain right
	// after the write delivered and failed to deliver (an undelivered
	// effect stays at the head of the row's outbox; the row does not fail).
	Enqueued, Delivered, Undelivered int
	// Committed is when the row's write returned (Projection.Now), zero
	// when nothing was written: the end of its applied events' freshness.
	Committed time.Time
}

// Failed reports whether the row failed.
func (o *Outcome) Failed() bool { return o.Err != nil }

// FailedPositions returns the records to report failed for the row: the
// earliest of the row when it failed, else the earliest of each failed
// instance (whose events the write left out). Ascending; none when nothing
// failed or the failed events came with no record.
func (o *Outcome) FailedPositions() []int {
	if o.Err != nil {
		if len(o.Positions) > 0 {
			return o.Positions[:1]
		}
		return nil
	}
	var out []int
	for _, in := range o.Instances {
		if in.Err != nil && len(in.Positions) > 0 {
			out = append(out, in.Positions[0])
		}
	}
	sort.Ints(out)
	return out
}

// Applied returns every applied event of the row, across instances, in fold order.
func (o *Outcome) Applied() []abi.Event {
	var out []abi.Event
	for _, in := range o.Instances {
		out = append(out, in.Applied...)
	}
	return out
}

// Ignored is an event whose key named no row.
type Ignored struct {
	Event abi.Event
	Pos   int
}

// Result is the outcome of one ApplyBatch call. ApplyBatch never fails as a
// whole: every row has its own Outcome.
type Result struct {
	Projection string
	Rows       []Outcome
	Ignored    []Ignored
	// KeyFailures are events whose key function failed; their rows are
	// unknown, so their records must be retried.
	KeyFailures []KeyFailure
	// Waited is how long the batch waited for the projection's rate limit
	// (Projection.Limit) before it was applied.
	Waited time.Duration
	// Paused is set when the projection was paused for the call: nothing
	// was applied, and Deferred holds the events it was handed.
	Paused   bool
	Deferred []Input
}

// KeyFailure is an event the projection's key function failed on.
type KeyFailure struct {
	Event abi.Event
	Pos   int
	Err   error
}

// ErrConcurrentModification is the error of a row whose conditional write
// lost every race of its retry budget.
var ErrConcurrentModification = errors.New("ConcurrentModification")

// ErrProjectionSourceConflict is the error of a source instance that feeds
// a row whose checkpoint field follows another instance, when the
// projection has no checkpoint map to give it an entry of its own.
var ErrProjectionSourceConflict = errors.New("ProjectionSourceConflict")

// RowError is the error of a failed row: which projection and row, and why.
type RowError struct {
	Projection string
	Key        string
	Cause      error
}

// Error implements error.
func (e *RowError) Error() string {
	return fmt.Sprintf("projection %s: row %s: %v", e.Projection, e.Key, e.Cause)
}

// Unwrap returns the cause.
func (e *RowError) Unwrap() error { return e.Cause }

// ErrItemTooLarge is matched (errors.Is) by the error of a row whose item,
// as the plugin made it, is over DynamoDB's 400 KB item limit (a
// *logic.OutputError, which errors.As finds too). The same plugin version
// folding the same row from the same checkpoint makes the same item, so
// every later delivery of the row fails the same way until the plugin
// changes.
var ErrItemTooLarge = errors.New("the row's item is over DynamoDB's 400 KB limit")

// itemTooLarge is an output error of an item too large: it matches
// ErrItemTooLarge, and through it logic.ErrOutput.
type itemTooLarge struct{ *logic.OutputError }

// Unwrap returns the output error.
func (e itemTooLarge) Unwrap() error { return e.OutputError }

// Is matches ErrItemTooLarge.
func (e itemTooLarge) Is(target error) bool { return target == ErrItemTooLarge }

// CallError is the error of a row whose plugin call failed on its own:
// it trapped, ran past its time or its loop budget, or answered what the
// protocol does not allow. Plugin names the plugin called; Starts are the
// first events the call folded, one per stream instance (the events right
// after the row's checkpoints). While the plugin and the row's checkpoints
// stay as they are, every later delivery of the row folds from the same
// events and, unless the failure came from the machine (a call starved of
// CPU past its timeout), fails the same way. The message is Err's.
type CallError struct {
	Plugin string
	Starts []abi.Event
	Err    error
}

// Error implements error.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns the call's error.
func (e *CallError) Unwrap() error { return e.Err }

// EventError is a domain error that failed an event's fold (evolve failed
// and terminal did not accept the error).
type EventError struct {
	Event abi.Event
	Err   *abi.Error
}

// Error implements error.
func (e *EventError) Error() string {
	return fmt.Sprintf("evolve failed on %s %s v%d (%s): %v; the row keeps its checkpoint below this event and every later delivery will fail the same way until the plugin accepts or skips it (terminal / skip), or the event is repaired in the event table and the row caught up (`host catchup --id %s`: a change-feed record keeps the event as it was)",
		e.Event.Stream, e.Event.StreamID, e.Event.Version, e.Event.Type, e.Err, e.Event.StreamID)
}

// Unwrap returns the domain error.
func (e *EventError) Unwrap() error { return e.Err }
