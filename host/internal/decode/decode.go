// Package decode turns change-feed records into decoded events: the first
// stage of processBatch. Only INSERTs of the configured
// streams' events become events; TTL deletions and other MODIFY / REMOVE
// records never do. Each event and failure keeps its record's position and
// identifier (dynamodb.SequenceNumber for Lambda, eventID for Pipes, or a
// custom extractor's).
//
// The package depends on neither aws-lambda-go nor the AWS SDK; adapters
// (host/decode/lambdaevents) convert their records into Record.
package decode

import (
	"errors"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// Source names who delivers the records and so reads the batch response.
type Source string

// The record sources.
const (
	SourceLambda Source = "lambda" // identifier: dynamodb.SequenceNumber
	SourcePipe   Source = "pipe"   // identifier: eventID
)

// FailurePolicy is what becomes of a record whose image fails to decode.
type FailurePolicy string

// The decode failure policies.
const (
	OnFailureReport FailurePolicy = "report" // the record is reported as failed (default)
	OnFailureSkip   FailurePolicy = "skip"   // the record is acknowledged, still listed
)

// Reason says why a record did not become an event.
type Reason string

// The reasons a record is ignored.
const (
	ReasonTTLDeletion Reason = "ttl-deletion" // a REMOVE by DynamoDB's TTL
	ReasonRemove      Reason = "remove"       // any other REMOVE
	ReasonModify      Reason = "modify"       // a MODIFY (events are immutable)
	ReasonOtherName   Reason = "other-event-name"
	ReasonNotAnEvent  Reason = "not-an-event" // an INSERT of no configured stream's event
	ReasonNoImage     Reason = "no-image"     // the custom Image extractor found none
)

// ErrNoImage is matched by the failure of an INSERT that carries no NewImage.
var ErrNoImage = errors.New("decode: INSERT record without NewImage")

// ErrUnknownShape is matched by the failure of a record of a shape the
// options cannot read.
var ErrUnknownShape = errors.New("decode: unknown record shape")

// Options configures Decode.
type Options struct {
	// Decoder recognises the configured streams' events. Nil decodes no
	// events (every INSERT is ignored as not-an-event).
	Decoder *eventstore.Decoder
	// Source selects the identifier: SourceLambda (default) or SourcePipe.
	Source Source
	// Image, when set, extracts the new image of an INSERT from a record of
	// any shape (e.g. a Pipe input template's); ok false: not an insert.
	Image func(raw any) (abi.Item, bool)
	// Identifier, when set, extracts a record's identifier.
	Identifier func(raw any) string
	// OnDecodeFailure is OnFailureReport (default) or OnFailureSkip.
	OnDecodeFailure FailurePolicy
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	switch o.Source {
	case "", SourceLambda, SourcePipe:
	default:
		if o.Identifier == nil {
			return fmt.Errorf("decode: unknown source %q: use %q, %q or set Identifier", o.Source, SourceLambda, SourcePipe)
		}
	}
	switch o.OnDecodeFailure {
	case "", OnFailureReport, OnFailureSkip:
	default:
		return fmt.Errorf("decode: unknown onDecodeFailure %q: use %q or %q", o.OnDecodeFailure, OnFailureReport, OnFailureSkip)
	}
	return nil
}

// Event is a record decoded into an event of a configured stream.
type Event struct {
	Position   int    // the record's index in the batch
	Identifier string // the record's identifier for the batch response
	Stream     eventstore.Stream
	Event      abi.Event
	// Created is the record's ApproximateCreationDateTime (zero when the
	// record has none, or is not of the standard shape).
	Created time.Time
}

// DecodeFailure is a record whose image failed to decode.
type DecodeFailure struct {
	Position   int
	Identifier string
	Err        error
	// Skipped is set under OnFailureSkip: the record is acknowledged, not
	// reported in the batch response, but still listed to log or dead-letter.
	Skipped bool
	// Image is the record's image that failed to decode (nil when the
	// record had none): what a caller compares with the event table's
	// item at its key.
	Image abi.Item
	// Created is the record's ApproximateCreationDateTime (zero when the
	// record has none, or is not of the standard shape).
	Created time.Time
}

// Ignored is a record that is not an event (acknowledged, nothing to do).
type Ignored struct {
	Position   int
	Identifier string
	Reason     Reason
}

// Result is the decoded batch.
type Result struct {
	Events   []Event         // in record order
	Failures []DecodeFailure // in record order
	Ignored  []Ignored       // in record order
}

// TTLDeletions returns the ignored records that were TTL deletions.
func (r Result) TTLDeletions() []Ignored { return r.IgnoredFor(ReasonTTLDeletion) }

// IgnoredFor returns the ignored records with reason.
func (r Result) IgnoredFor(reason Reason) []Ignored {
	var out []Ignored
	for _, ig := range r.Ignored {
		if ig.Reason == reason {
			out = append(out, ig)
		}
	}
	return out
}

// Reported returns the failures to report in the batch response (those not
// skipped).
func (r Result) Reported() []DecodeFailure {
	var out []DecodeFailure
	for _, f := range r.Failures {
		if !f.Skipped {
			out = append(out, f)
		}
	}
	return out
}

// Decode decodes records of the standard shape.
func Decode(records []Record, opts Options) Result {
	var res Result
	res.Events = make([]Event, 0, len(records)) // at most one a record: no growth
	for i := range records {
		// A record is passed as any only to the extractors that take one:
		// boxed, it is copied to the heap.
		var raw any
		if opts.Image != nil || opts.Identifier != nil {
			raw = records[i]
		}
		decodeAt(&res, i, raw, &records[i], opts)
	}
	if len(res.Events) == 0 {
		res.Events = nil
	}
	return res
}

// DecodeRaw decodes records of any shape: Record values (or pointers) are read
// as such unless Options.Image / Options.Identifier are set, which read every
// other shape.
func DecodeRaw(records []any, opts Options) Result {
	var res Result
	res.Events = make([]Event, 0, len(records))
	for i, raw := range records {
		decodeOne(&res, i, raw, opts)
	}
	if len(res.Events) == 0 {
		res.Events = nil
	}
	return res
}

func decodeOne(res *Result, pos int, raw any, opts Options) {
	rec, isRecord := raw.(Record)
	if p, ok := raw.(*Record); ok && p != nil {
		rec, isRecord = *p, true
	}
	if !isRecord {
		decodeAt(res, pos, raw, nil, opts)
		return
	}
	decodeAt(res, pos, raw, &rec, opts)
}

// decodeAt decodes the record at pos: raw as the extractors of opts take
// it (nil when opts has none), rec the record of the standard shape (nil
// for another shape).
func decodeAt(res *Result, pos int, raw any, rec *Record, opts Options) {
	isRecord := rec != nil
	id := identifier(raw, rec, opts)
	ignore := func(r Reason) { res.Ignored = append(res.Ignored, Ignored{Position: pos, Identifier: id, Reason: r}) }
	var image abi.Item
	fail := func(err error) {
		f := DecodeFailure{Position: pos, Identifier: id, Err: err, Skipped: opts.OnDecodeFailure == OnFailureSkip, Image: image}
		if isRecord {
			f.Created = rec.DynamoDB.ApproximateCreationDateTime
		}
		res.Failures = append(res.Failures, f)
	}
	switch {
	case isRecord && rec.IsTTLDeletion():
		ignore(ReasonTTLDeletion)
		return
	case opts.Image != nil:
		img, ok := opts.Image(raw)
		if !ok {
			ignore(ReasonNoImage)
			return
		}
		image = img
	case isRecord:
		switch rec.EventName {
		case EventInsert:
		case EventModify:
			ignore(ReasonModify)
			return
		case EventRemove:
			ignore(ReasonRemove)
			return
		default:
			ignore(ReasonOtherName)
			return
		}
		if rec.DynamoDB.NewImage == nil {
			fail(fmt.Errorf("%w: the table's StreamViewType is %q; it must be NEW_IMAGE or NEW_AND_OLD_IMAGES",
				ErrNoImage, rec.DynamoDB.StreamViewType))
			return
		}
		image = rec.DynamoDB.NewImage
	default:
		fail(fmt.Errorf("%w: %T; set Options.Image and Options.Identifier to read it", ErrUnknownShape, raw))
		return
	}
	if opts.Decoder == nil {
		ignore(ReasonNotAnEvent)
		return
	}
	d, ok, err := opts.Decoder.Decode(image)
	switch {
	case err != nil:
		fail(err)
	case !ok:
		ignore(ReasonNotAnEvent)
	default:
		ev := Event{Position: pos, Identifier: id, Stream: d.Stream, Event: d.Event}
		if isRecord {
			ev.Created = rec.DynamoDB.ApproximateCreationDateTime
		}
		res.Events = append(res.Events, ev)
	}
}

func identifier(raw any, rec *Record, opts Options) string {
	if opts.Identifier != nil {
		return opts.Identifier(raw)
	}
	if rec == nil {
		return ""
	}
	switch opts.Source {
	case "", SourceLambda:
		return rec.DynamoDB.SequenceNumber
	case SourcePipe:
		return rec.EventID
	}
	return ""
}
