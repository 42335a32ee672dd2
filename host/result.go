package host

import (
	"slices"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// Errors callers match with errors.Is.
var (
	// ErrStreamRecordIdentifierMissing is matched by the error of a batch
	// with a failed record that has no identifier: an empty identifier would
	// make the source fail the whole batch silently, so the call fails and
	// the source redelivers the batch.
	ErrStreamRecordIdentifierMissing = batch.ErrStreamRecordIdentifierMissing
	// ErrConcurrentModification is matched by the error of a row whose
	// conditional write lost every race of its retry budget.
	ErrConcurrentModification = apply.ErrConcurrentModification
	// ErrProjectionSourceConflict is matched by the error of a source
	// instance that feeds a row whose checkpoint field follows another
	// instance, in a projection without a checkpoint map.
	ErrProjectionSourceConflict = apply.ErrProjectionSourceConflict
	// ErrNoRow is matched by CatchUp's error when no event of the stream
	// instance addresses a row.
	ErrNoRow = apply.ErrNoRow
	// ErrCheckpointMissing is matched by the error of a row the host wrote
	// (it carries the projection's writtenBy attribute) that holds none of
	// the checkpoint attributes the configuration names: a typo in a
	// checkpoint field's name would otherwise fold every event again.
	ErrCheckpointMissing = apply.ErrCheckpointMissing
	// ErrNoEvents is matched by the error of a catch-up or a rebuild of a
	// stream instance that has no event at all (an id or a source that
	// names nothing).
	ErrNoEvents = apply.ErrNoEvents
	// ErrEndpointUnreachable is matched by the error of a DynamoDB request
	// that no server answered (connection refused or timed out, a name
	// that does not resolve); its text names the endpoint and what to
	// check.
	ErrEndpointUnreachable = ddbclient.ErrUnreachable
)

// Result is what one batch did: each record decoded, ignored or failed to
// decode; each projection's rows; and the records to report failed.
// Response builds the partial batch response from it.
type Result struct {
	// Records is the number of records in the batch.
	Records int
	// Events are the records that decoded to events, in record order.
	Events []Event
	// Ignored are the records that are no event of a configured stream
	// (MODIFY and REMOVE records, TTL deletions, other items), with why.
	Ignored []Ignored
	// DecodeFailures are the records whose image did not decode.
	DecodeFailures []DecodeFailure
	// Obsolete are the records whose image did not decode but whose item
	// the event table no longer holds (removed since): passed over, not
	// reported failed, each logged with
	// a warning. They are not in DecodeFailures.
	Obsolete []ObsoleteRecord
	// Corrected are the records whose image did not decode but whose item
	// was corrected since into an event of a configured stream: the event
	// as the item is now is folded as the record's (it is in Events), with
	// a warning. They are not in DecodeFailures.
	Corrected []ObsoleteRecord
	// Projections holds each projection's outcome, by projection name.
	Projections map[string]ProjectionResult
	// Unrouted are the events of streams named for side effects only.
	Unrouted []Event

	inner *batch.Result
	freshnessIndex
}

// Event is a decoded event and the position of its record in the batch.
type Event struct {
	Position int
	abi.Event
	// Created is its record's ApproximateCreationDateTime: when the change
	// was made (zero when the record did not say).
	Created time.Time
}

// Ignored is a record that is not an event of a configured stream.
type Ignored struct {
	Position   int
	Identifier string
	// Reason is "ttl-deletion", "remove", "modify", "other-event-name",
	// "not-an-event" or "no-image".
	Reason string
}

// DecodeFailure is a record whose image is not a valid event.
type DecodeFailure struct {
	Position   int
	Identifier string
	Err        error
	// Skipped is set under onDecodeFailure "skip": the record is
	// acknowledged, not reported failed.
	Skipped bool
}

// ProjectionResult is one projection's part of a batch.
type ProjectionResult struct {
	// Rows holds one outcome per row the batch touched.
	Rows []Outcome
	// NoRow are the events whose key named no row: acknowledged, nothing
	// read or written.
	NoRow []Event
	// KeyFailures are the events the plugin's key function failed on;
	// their records are reported failed, to be delivered again.
	KeyFailures []KeyFailure
	// RateWait is how long the batch waited for the projection's rate
	// limit (rateLimit) before it was applied.
	RateWait time.Duration
	// Paused is set when the projection was paused (Host.Pause): none of
	// its events was applied, and Deferred lists them. A caller that
	// acknowledges the batch keeps their stream instances and catches them
	// up once the projection resumes (host/sidecar records them in the
	// lease table).
	Paused   bool
	Deferred []Event
}

// KeyFailure is an event the projection's key function failed on.
type KeyFailure struct {
	Event
	Err error
}

// Outcome is what happened to one row: applied (Err nil) or failed (Err
// set, nothing written).
type Outcome struct {
	Key       abi.Item   // the row's key
	Instances []Instance // one per stream instance with events for the row; on a catch-up, every instance caught up (those already at the head with the checkpoint the row holds)
	State     abi.Item   // the row after the call (as written, or as read when nothing was written)
	Written   bool       // the call wrote the row
	// Removed: the row is a tombstone after the call (State is nil). With
	// Written, this call removed it (evolve returned removeRow); without,
	// it was one already and stays one.
	Removed  bool
	Revision int64 // the row's revision after the call (0 without revision)
	Attempts int   // write attempts (1 + lost races, + 1 when Existed)
	// Existed: the row was taken for a new one (the batch began each of its
	// streams) and written without a read first, but it was there already:
	// that write's condition failed, and the row was read and applied as
	// usual. Not a lost race.
	Existed   bool
	Positions []int // record positions of the row's events in the batch, ascending
	// Err is why the row failed. When the plugin's evolve failed on an
	// event with a domain error that terminal did not accept (in Go,
	// guest.Errorf("Boom", ...)), errors.As(Err, &e) with e an *abi.Error
	// finds it: e.Tag is "Boom", e.Message the message.
	Err error
	// Enqueued is the number of side effects the row's write committed to
	// its outbox; Delivered and Undelivered what the delivery right after
	// the write did (an undelivered effect waits at the head of the row's
	// outbox for the next drain; the row does not fail).
	Enqueued, Delivered, Undelivered int
	// Committed is when the row's write returned, by the host's clock
	// (WithClock); zero when nothing was written.
	Committed time.Time
}

// Instance is the outcome for one stream instance feeding a row.
type Instance struct {
	Source         string
	StreamID       string
	Applied        []abi.Event // folded, in version order, gap-filled ones included
	AlreadyApplied []abi.Event // the batch's events the row already had
	Skipped        []abi.Event // events evolve skipped
	Rejected       []Rejection // events evolve failed on and terminal accepted
	// Superseded are, for a source in latest mode, the events older than
	// the one applied: never folded, covered by the checkpoint.
	Superseded []abi.Event
	Version    uint64 // the instance's checkpoint after the call
	// Positions are the record positions of the instance's events in the
	// batch, ascending: when the instance failed (Err set) in a row that
	// did not, its earliest is reported failed.
	Positions []int
	Err       error // set when this instance failed
}

// Rejection is an event that evolve failed on and terminal accepted.
type Rejection struct {
	Event abi.Event
	Error *abi.Error
}

// Failed reports whether the row failed.
func (o *Outcome) Failed() bool { return o.Err != nil }

// Applied returns the row's applied events, across instances, in fold order.
func (o *Outcome) Applied() []abi.Event {
	var out []abi.Event
	for _, in := range o.Instances {
		out = append(out, in.Applied...)
	}
	return out
}

// Response is the partial batch response Lambda and Pipes read.
type Response struct {
	BatchItemFailures []ItemFailure `json:"batchItemFailures"`
}

// ItemFailure names one record to deliver again.
type ItemFailure struct {
	ItemIdentifier string `json:"itemIdentifier"`
}

// Fail adds records, by position, to report failed (a side effect that
// failed after the batch, say); call Response again afterwards.
func (r *Result) Fail(positions ...int) { r.inner.Fail(positions...) }

// Failed returns the positions of the records reported failed, ascending,
// each once.
// OutcomesResult wraps the outcomes of rows one projection applied outside
// a batch (a catch-up of what a paused projection skipped) as a Result
// with no records, so that what counts a batch's work (metrics, freshness)
// counts theirs too.
func OutcomesResult(projection string, outs []Outcome) *Result {
	return &Result{Projections: map[string]ProjectionResult{projection: {Rows: outs}}, inner: &batch.Result{}}
}

func (r *Result) Failed() []int {
	ps := slices.Clone(r.inner.Failed)
	slices.Sort(ps)
	return slices.Compact(ps)
}

// Response builds the partial batch response: the identifier of the
// earliest record of every failed row, and of every record that failed to
// decode, in record order. Its error (ErrStreamRecordIdentifierMissing)
// means the whole invocation must fail.
func (r *Result) Response() (Response, error) {
	in, err := r.inner.Response()
	out := Response{BatchItemFailures: make([]ItemFailure, len(in.BatchItemFailures))}
	for i, f := range in.BatchItemFailures {
		out.BatchItemFailures[i] = ItemFailure{ItemIdentifier: f.ItemIdentifier}
	}
	return out, err
}

// Identifier returns the identifier of the record at position p.
func (r *Result) Identifier(p int) string { return r.inner.Identifier(p) }

func resultOf(in *batch.Result) *Result {
	if in == nil {
		return nil
	}
	r := &Result{Records: in.Records, Projections: make(map[string]ProjectionResult, len(in.Projections)), inner: in}
	if len(in.Decoded.Events) > 0 {
		r.Events = make([]Event, 0, len(in.Decoded.Events))
	}
	for _, ev := range in.Decoded.Events {
		r.Events = append(r.Events, Event{Position: ev.Position, Event: ev.Event, Created: ev.Created})
	}
	for _, ig := range in.Decoded.Ignored {
		r.Ignored = append(r.Ignored, Ignored{Position: ig.Position, Identifier: ig.Identifier, Reason: string(ig.Reason)})
	}
	for _, f := range in.Decoded.Failures {
		r.DecodeFailures = append(r.DecodeFailures, DecodeFailure{Position: f.Position, Identifier: f.Identifier, Err: f.Err, Skipped: f.Skipped})
	}
	for _, f := range in.Obsolete {
		r.Obsolete = append(r.Obsolete, ObsoleteRecord{Position: f.Position, Identifier: f.Identifier, Err: f.Err})
	}
	for _, f := range in.Corrected {
		r.Corrected = append(r.Corrected, ObsoleteRecord{Position: f.Position, Identifier: f.Identifier, Err: f.Err})
	}
	for _, ev := range in.Unrouted {
		r.Unrouted = append(r.Unrouted, Event{Position: ev.Pos, Event: ev.Event})
	}
	for name, pr := range in.Projections {
		r.Projections[name] = projectionResultOf(pr)
	}
	return r
}

func projectionResultOf(pr apply.Result) ProjectionResult {
	out := ProjectionResult{Rows: outcomesOf(pr.Rows), RateWait: pr.Waited, Paused: pr.Paused}
	for _, d := range pr.Deferred {
		out.Deferred = append(out.Deferred, Event{Position: d.Pos, Event: d.Event})
	}
	for _, ig := range pr.Ignored {
		out.NoRow = append(out.NoRow, Event{Position: ig.Pos, Event: ig.Event})
	}
	for _, kf := range pr.KeyFailures {
		out.KeyFailures = append(out.KeyFailures, KeyFailure{Event: Event{Position: kf.Pos, Event: kf.Event}, Err: kf.Err})
	}
	return out
}

func outcomesOf(rows []apply.Outcome) []Outcome {
	out := make([]Outcome, len(rows))
	for i := range rows {
		out[i] = outcomeOf(rows[i])
	}
	return out
}

func outcomeOf(o apply.Outcome) Outcome {
	out := Outcome{Key: o.Key, State: o.State, Written: o.Written, Removed: o.Removed, Revision: o.Revision, Attempts: o.Attempts, Existed: o.Existed, Positions: o.Positions, Err: o.Err,
		Enqueued: o.Enqueued, Delivered: o.Delivered, Undelivered: o.Undelivered, Committed: o.Committed}
	for _, in := range o.Instances {
		x := Instance{Source: in.Source, StreamID: in.StreamID, Applied: in.Applied, AlreadyApplied: in.AlreadyApplied,
			Skipped: in.Skipped, Superseded: in.Superseded, Version: in.Version, Positions: in.Positions, Err: in.Err}
		for _, rj := range in.Rejected {
			x.Rejected = append(x.Rejected, Rejection{Event: rj.Event, Error: rj.Error})
		}
		out.Instances = append(out.Instances, x)
	}
	return out
}
