package lambda

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambdaevents"
)

// splitPayload returns the records of a payload of the source's shape, each
// still raw so one unreadable record does not fail the others.
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
		var recs []json.RawMessage
		if err := json.Unmarshal(p, &recs); err != nil {
			return nil, payloadError("%w: %w", ErrPayloadShape, err)
		}
		return recs, nil
	}
	var ev struct {
		Records *[]json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal(p, &ev); err != nil {
		return nil, payloadError("%w: %w", ErrPayloadShape, err)
	}
	if ev.Records == nil {
		return nil, payloadError("%w: no \"Records\" array: not a DynamoDB stream event", ErrPayloadShape)
	}
	return *ev.Records, nil
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
	return `a Lambda event source mapping sends a DynamoDB stream event, {"Records": [...]} (a captured one: host capture --out F)`
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

// parseRecords converts each raw record with aws-lambda-go's types and
// host/lambdaevents. A record that does not convert stands in the
// batch as a record of no event name (the host ignores it, keeping its
// identifiers) and comes back in bad.
func parseRecords(raws []json.RawMessage) ([]host.Record, []badRecord) {
	recs := make([]host.Record, len(raws))
	var bad []badRecord
	for i, raw := range raws {
		rec, err := parseRecord(raw)
		if err == nil {
			recs[i] = rec
			continue
		}
		var ids struct {
			EventID   string `json:"eventID"`
			EventName string `json:"eventName"`
			DynamoDB  struct {
				SequenceNumber string `json:"SequenceNumber"`
			} `json:"dynamodb"`
		}
		_ = json.Unmarshal(raw, &ids) // best effort: a record without them fails the call (B3)
		recs[i] = host.Record{EventID: ids.EventID, DynamoDB: host.StreamRecord{SequenceNumber: ids.DynamoDB.SequenceNumber}}
		report := ids.EventName != host.EventModify && ids.EventName != host.EventRemove
		bad = append(bad, badRecord{pos: i, eventID: ids.EventID, seq: ids.DynamoDB.SequenceNumber, report: report,
			err: fmt.Errorf("record %d is not a readable DynamoDB stream record: %w", i, err)})
	}
	return recs, bad
}

func parseRecord(raw json.RawMessage) (host.Record, error) {
	var r events.DynamoDBEventRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return host.Record{}, err
	}
	return lambdaevents.FromRecord(r)
}
