package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// Event names of a change-feed record.
const (
	EventInsert = "INSERT"
	EventModify = "MODIFY"
	EventRemove = "REMOVE"
)

// The user identity DynamoDB puts on the REMOVE records of TTL deletions.
const (
	TTLIdentityType      = "Service"
	TTLIdentityPrincipal = "dynamodb.amazonaws.com"
)

// Record is one DynamoDB stream record, mirroring the wire shape Lambda and
// EventBridge Pipes deliver, with images as abi items. Adapters (such as
// host/decode/lambdaevents) convert their records into it.
type Record struct {
	EventID        string        // "eventID": the Pipe identifier
	EventName      string        // INSERT, MODIFY or REMOVE
	EventVersion   string        // "eventVersion"
	EventSource    string        // "aws:dynamodb"
	EventSourceARN string        // "eventSourceARN"
	AWSRegion      string        // "awsRegion"
	DynamoDB       StreamRecord  // "dynamodb"
	UserIdentity   *UserIdentity // "userIdentity"; set on TTL deletions
}

// StreamRecord is a record's "dynamodb" part.
type StreamRecord struct {
	ApproximateCreationDateTime time.Time // epoch seconds on the wire
	Keys                        abi.Item
	NewImage                    abi.Item
	OldImage                    abi.Item
	SequenceNumber              string // the Lambda identifier
	SizeBytes                   int64
	StreamViewType              string // KEYS_ONLY, NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES
}

// UserIdentity is who made a change other than an application: DynamoDB
// itself for TTL deletions.
type UserIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// IsTTLDeletion reports whether the record is DynamoDB's deletion of an
// expired item: a REMOVE by the service principal.
func (r Record) IsTTLDeletion() bool {
	return r.EventName == EventRemove && r.UserIdentity != nil &&
		r.UserIdentity.Type == TTLIdentityType && r.UserIdentity.PrincipalID == TTLIdentityPrincipal
}

type wireStream struct {
	ApproximateCreationDateTime *float64        `json:"ApproximateCreationDateTime,omitempty"`
	Keys                        json.RawMessage `json:"Keys,omitempty"`
	NewImage                    json.RawMessage `json:"NewImage,omitempty"`
	OldImage                    json.RawMessage `json:"OldImage,omitempty"`
	SequenceNumber              string          `json:"SequenceNumber,omitempty"`
	SizeBytes                   int64           `json:"SizeBytes,omitempty"`
	StreamViewType              string          `json:"StreamViewType,omitempty"`
}

type wireRecord struct {
	EventID        string        `json:"eventID,omitempty"`
	EventName      string        `json:"eventName,omitempty"`
	EventVersion   string        `json:"eventVersion,omitempty"`
	EventSource    string        `json:"eventSource,omitempty"`
	EventSourceARN string        `json:"eventSourceARN,omitempty"`
	AWSRegion      string        `json:"awsRegion,omitempty"`
	DynamoDB       wireStream    `json:"dynamodb"`
	UserIdentity   *UserIdentity `json:"userIdentity,omitempty"`

	// A Kinesis record's fields (eventSource aws:kinesis): under "kinesis"
	// as Lambda delivers it, or at the top as an EventBridge Pipe does.
	Kinesis *wireKinesis `json:"kinesis,omitempty"`
	wireKinesis
}

// UnmarshalJSON reads a record in the Lambda / Pipes JSON shape: a
// DynamoDB stream record, or a Kinesis record carrying a DynamoDB change
// record (eventSource aws:kinesis; see FromKinesisData).
func (r *Record) UnmarshalJSON(b []byte) error {
	var w wireRecord
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.EventSource == SourceKinesis {
		rec, err := w.kinesisRecord()
		if err != nil {
			return err
		}
		*r = rec
		return nil
	}
	out := Record{EventID: w.EventID, EventName: w.EventName, EventVersion: w.EventVersion,
		EventSource: w.EventSource, EventSourceARN: w.EventSourceARN, AWSRegion: w.AWSRegion,
		UserIdentity: w.UserIdentity}
	d := w.DynamoDB
	if d.ApproximateCreationDateTime != nil {
		sec, frac := math.Modf(*d.ApproximateCreationDateTime)
		out.DynamoDB.ApproximateCreationDateTime = time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
	}
	var err error
	if out.DynamoDB.Keys, err = ddbjson.ItemFromJSON(d.Keys); err != nil {
		return fmt.Errorf("dynamodb.Keys: %w", err)
	}
	if out.DynamoDB.NewImage, err = ddbjson.ItemFromJSON(d.NewImage); err != nil {
		return fmt.Errorf("dynamodb.NewImage: %w", err)
	}
	if out.DynamoDB.OldImage, err = ddbjson.ItemFromJSON(d.OldImage); err != nil {
		return fmt.Errorf("dynamodb.OldImage: %w", err)
	}
	out.DynamoDB.SequenceNumber = d.SequenceNumber
	out.DynamoDB.SizeBytes = d.SizeBytes
	out.DynamoDB.StreamViewType = d.StreamViewType
	*r = out
	return nil
}

// MarshalJSON writes the record in the Lambda / Pipes JSON shape.
func (r Record) MarshalJSON() ([]byte, error) {
	w := wireRecord{EventID: r.EventID, EventName: r.EventName, EventVersion: r.EventVersion,
		EventSource: r.EventSource, EventSourceARN: r.EventSourceARN, AWSRegion: r.AWSRegion,
		UserIdentity: r.UserIdentity}
	d := r.DynamoDB
	if !d.ApproximateCreationDateTime.IsZero() {
		f := float64(d.ApproximateCreationDateTime.UnixNano()) / 1e9
		w.DynamoDB.ApproximateCreationDateTime = &f
	}
	var err error
	if w.DynamoDB.Keys, err = ddbjson.ItemToJSON(d.Keys); err != nil {
		return nil, err
	}
	if w.DynamoDB.NewImage, err = ddbjson.ItemToJSON(d.NewImage); err != nil {
		return nil, err
	}
	if w.DynamoDB.OldImage, err = ddbjson.ItemToJSON(d.OldImage); err != nil {
		return nil, err
	}
	w.DynamoDB.SequenceNumber = d.SequenceNumber
	w.DynamoDB.SizeBytes = d.SizeBytes
	w.DynamoDB.StreamViewType = d.StreamViewType
	return json.Marshal(w)
}

// ParseEvent parses a captured DynamoDB stream event, {"Records": [...]} as
// Lambda receives it; a bare JSON array of records is accepted too. The
// records may be Kinesis records carrying DynamoDB change records (a
// Lambda Kinesis event, or a Pipe's batch from a Kinesis stream).
func ParseEvent(data []byte) ([]Record, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var recs []Record
		if err := json.Unmarshal(data, &recs); err != nil {
			return nil, fmt.Errorf("decode: parse records: %w", err)
		}
		return recs, nil
	}
	var ev struct {
		Records *[]Record `json:"Records"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("decode: parse stream event: %w", err)
	}
	if ev.Records == nil {
		return nil, fmt.Errorf("decode: parse stream event: no \"Records\" array")
	}
	return *ev.Records, nil
}

// ParseEventFile reads and parses a captured stream event file (for
// `host apply --records FILE`).
func ParseEventFile(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	recs, err := ParseEvent(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
