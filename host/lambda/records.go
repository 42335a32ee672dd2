package lambda

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/lambdaevents"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// splitPayload returns the records of a payload of the source's shape, each
// still raw (a sub-slice of the payload) so one unreadable record does not
// fail the others.
func splitPayload(payload json.RawMessage, source string) ([]json.RawMessage, error) {
	p := bytes.TrimSpace(payload)
	if len(p) == 0 {
		return nil, payloadError("%w: empty payload", ErrPayloadShape)
	}
	if !json.Valid(p) {
		var x any
		err := json.Unmarshal(p, &x)
		return nil, payloadError("%w: the payload is not JSON (%v; it starts %q): %s", ErrPayloadShape, err, head(p, 40), expected(source))
	}
	isArray := p[0] == '['
	switch {
	case source == SourcePipe && !isArray:
		return nil, payloadError("%w: the source is %q, which sends a JSON array of records, but the payload is not an array"+
			" (a Lambda event source mapping sends {\"Records\": [...]}: set DYNAFOLD_SOURCE=%s)", ErrPayloadShape, SourcePipe, SourceLambda)
	case source == SourceLambda && isArray:
		return nil, payloadError("%w: the source is %q, which sends {\"Records\": [...]}, but the payload is a JSON array"+
			" (an EventBridge Pipe target receives one: set DYNAFOLD_SOURCE=%s)", ErrPayloadShape, SourceLambda, SourcePipe)
	case isArray:
		return rawElements(p)
	}
	var records []byte
	err := ddbjson.Object(p, func(k, v []byte) error {
		if bytes.EqualFold(k, []byte("Records")) && !ddbjson.IsNull(v) {
			records = v
		}
		return nil
	})
	if err != nil {
		return nil, payloadError("%w: %w", ErrPayloadShape, err)
	}
	if records == nil {
		return nil, payloadError("%w: no \"Records\" array: not a DynamoDB stream or Kinesis event", ErrPayloadShape)
	}
	return rawElements(records)
}

// rawElements returns the elements of a JSON array, not copied.
func rawElements(b []byte) ([]json.RawMessage, error) {
	recs := []json.RawMessage{}
	err := ddbjson.Array(b, func(v []byte) error {
		recs = append(recs, v)
		return nil
	})
	if err != nil {
		return nil, payloadError("%w: %w", ErrPayloadShape, err)
	}
	return recs, nil
}

// PayloadError is the error of an invocation whose payload is not the
// shape its source delivers; it matches ErrPayloadShape. Lambda reports it
// as errorType "PayloadError".
type PayloadError struct{ err error }

// Error implements error.
func (e *PayloadError) Error() string { return e.err.Error() }

// Unwrap returns ErrPayloadShape and the cause, if any.
func (e *PayloadError) Unwrap() error { return e.err }

// payloadError is fmt.Errorf as a *PayloadError.
func payloadError(format string, args ...any) error {
	return &PayloadError{err: fmt.Errorf(format, args...)}
}

// expected says what a payload of the source looks like.
func expected(source string) string {
	if source == SourcePipe {
		return "an EventBridge Pipe sends a JSON array of DynamoDB stream records"
	}
	return `a Lambda event source mapping sends a DynamoDB stream or Kinesis event, {"Records": [...]} (a captured one: host capture --out F)`
}

// head returns at most n bytes of b, for a message.
func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// badRecord is a record that is not a readable stream record.
type badRecord struct {
	pos          int
	eventID, seq string // its identifiers, as far as they could be read
	report       bool   // it may be an INSERT, so it is treated as a decode failure
	err          error
}

// parseRecords converts each raw record: DynamoDB stream records with
// aws-lambda-go's types and host/lambdaevents, Kinesis records with
// lambdaevents.ParseKinesisRecord. One event source mapping (or Pipe)
// delivers one kind, so the batch is read as the kind of its first record
// that names an eventSource, and a record of the other kind is not
// readable. A record that does not convert stands in the batch as a record
// of no event name (the host ignores it, keeping its identifiers) and
// comes back in bad. A record that names an eventSource other than a
// DynamoDB or Kinesis stream's (an SQS message: the function is wired to
// another kind of source) fails the whole payload with a *PayloadError,
// where it was passed over as a record of no event name.
func parseRecords(raws []json.RawMessage, source string) ([]host.Record, []badRecord, error) {
	kinesis := isKinesis(raws)
	parse, kind := parseRecord, "DynamoDB stream record"
	if kinesis {
		parse, kind = parseKinesisRecord, "Kinesis record of DynamoDB changes"
	}
	recs := make([]host.Record, len(raws))
	var bad []badRecord
	for i, raw := range raws {
		rec, err := parse(raw)
		if err == nil {
			recs[i] = rec
			continue
		}
		if err := foreignRecord(i, raw, err, source); err != nil {
			return nil, nil, err
		}
		var ids recordIDs
		_ = json.Unmarshal(raw, &ids) // best effort: a record without them fails the call (B3)
		seq := ids.sequenceNumber()
		recs[i] = host.Record{EventID: ids.EventID, DynamoDB: host.StreamRecord{SequenceNumber: seq}}
		report := ids.EventName != host.EventModify && ids.EventName != host.EventRemove
		bad = append(bad, badRecord{pos: i, eventID: ids.EventID, seq: seq, report: report,
			err: fmt.Errorf("record %d is not a readable %s: %w", i, kind, err)})
	}
	return recs, bad, nil
}

// errOtherSource is the error of parseRecord for a record whose
// eventSource is neither a DynamoDB stream's nor a Kinesis stream's.
var errOtherSource = errors.New("the eventSource of another kind of source")

// foreignRecord returns the payload error for record i when it names an
// eventSource other than aws:dynamodb and aws:kinesis (err is what reading
// it returned), else nil. A record with no eventSource (a hand-made test
// event) is read as a DynamoDB stream record.
func foreignRecord(i int, raw json.RawMessage, err error, source string) error {
	if !errors.Is(err, errOtherSource) && !errors.Is(err, lambdaevents.ErrNotKinesis) {
		return nil
	}
	es := decode.EventSource(raw)
	if es == "" || es == lambdaevents.EventSourceDynamoDB || es == lambdaevents.EventSourceKinesis {
		return nil
	}
	return payloadError("%w: record %d comes from %q, not from a DynamoDB stream (%q) or a Kinesis stream (%q): %s;"+
		" is the function's event source another kind of source (a queue, say)? Nothing was applied: point it at the event table's stream",
		ErrPayloadShape, i, es, lambdaevents.EventSourceDynamoDB, lambdaevents.EventSourceKinesis, expected(source))
}

// recordIDs are the identifiers of a record of either kind.
type recordIDs struct {
	EventID   string `json:"eventID"`
	EventName string `json:"eventName"`
	DynamoDB  struct {
		SequenceNumber string `json:"SequenceNumber"`
	} `json:"dynamodb"`
	Kinesis struct {
		SequenceNumber string `json:"sequenceNumber"`
	} `json:"kinesis"`
	SequenceNumber string `json:"sequenceNumber"` // a Pipe's Kinesis record
}

func (ids recordIDs) sequenceNumber() string {
	switch {
	case ids.DynamoDB.SequenceNumber != "":
		return ids.DynamoDB.SequenceNumber
	case ids.Kinesis.SequenceNumber != "":
		return ids.Kinesis.SequenceNumber
	}
	return ids.SequenceNumber
}

// isKinesis reports whether the batch holds Kinesis records: whether the
// first record that names an eventSource names aws:kinesis.
func isKinesis(raws []json.RawMessage) bool {
	for _, raw := range raws {
		if source := decode.EventSource(raw); source != "" {
			return source == lambdaevents.EventSourceKinesis
		}
	}
	return false
}

func parseRecord(raw json.RawMessage) (host.Record, error) {
	var r events.DynamoDBEventRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return host.Record{}, err
	}
	switch r.EventSource {
	case lambdaevents.EventSourceKinesis:
		return host.Record{}, fmt.Errorf("its eventSource is %q in an event of DynamoDB stream records (%q): "+
			"one event source mapping delivers one kind of record", r.EventSource, lambdaevents.EventSourceDynamoDB)
	case "", lambdaevents.EventSourceDynamoDB:
	default:
		return host.Record{}, fmt.Errorf("%w: %q", errOtherSource, r.EventSource)
	}
	return lambdaevents.FromRecord(r)
}

func parseKinesisRecord(raw json.RawMessage) (host.Record, error) {
	r, err := lambdaevents.ParseKinesisRecord(raw)
	if errors.Is(err, lambdaevents.ErrNotKinesis) {
		return host.Record{}, fmt.Errorf("%w, in an event of Kinesis records: one event source mapping delivers one kind of record", err)
	}
	return r, err
}

// CheckPayload returns the error the handler of source (SourceLambda, or
// "" for it, or SourcePipe) answers a payload with when the payload is not
// the shape that source delivers (a *PayloadError matching
// ErrPayloadShape), or nil; `host apply` refuses a captured payload with
// it, as the function would.
func CheckPayload(payload []byte, source string) error {
	source, err := checkSource(source)
	if err != nil {
		return err
	}
	raws, err := splitPayload(payload, source)
	if err != nil {
		return err
	}
	for i, raw := range raws {
		if err := foreignRecord(i, raw, errOtherSource, source); err != nil {
			return err
		}
	}
	return nil
}
