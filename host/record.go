package host

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
)

// Event names of a change-feed record.
const (
	EventInsert = "INSERT"
	EventModify = "MODIFY"
	EventRemove = "REMOVE"
)

// Record is one DynamoDB stream record, mirroring the JSON that a Lambda
// event source mapping and an EventBridge Pipe deliver, with the images as
// abi items. Its JSON methods read and write that wire shape; package
// host/records converts the aws-lambda-go and aws-sdk-go-v2 Streams types
// into it.
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
// itself for the deletions of expired items (TTL).
type UserIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// IsTTLDeletion reports whether the record is DynamoDB's deletion of an
// expired item: a REMOVE by the service principal. The host never takes
// one for a domain event.
func (r Record) IsTTLDeletion() bool { return r.internal().IsTTLDeletion() }

// UnmarshalJSON reads a record in the wire shape (images in DynamoDB JSON).
func (r *Record) UnmarshalJSON(b []byte) error {
	var d decode.Record
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*r = recordOf(d)
	return nil
}

// MarshalJSON writes the record in the wire shape.
func (r Record) MarshalJSON() ([]byte, error) { return json.Marshal(r.internal()) }

// ParseEvent parses a captured DynamoDB stream event: {"Records": [...]} as
// Lambda receives it, or a bare JSON array of records as a Pipe sends it.
func ParseEvent(data []byte) ([]Record, error) {
	recs, err := decode.ParseEvent(data)
	if err != nil {
		return nil, err
	}
	return recordsOf(recs), nil
}

// ParseEventFile reads and parses a captured stream event file.
func ParseEventFile(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the records: %w", err)
	}
	recs, err := ParseEvent(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

func (r Record) internal() decode.Record {
	d := decode.Record{
		EventID: r.EventID, EventName: r.EventName, EventVersion: r.EventVersion, EventSource: r.EventSource,
		EventSourceARN: r.EventSourceARN, AWSRegion: r.AWSRegion,
		DynamoDB: decode.StreamRecord(r.DynamoDB),
	}
	if r.UserIdentity != nil {
		d.UserIdentity = &decode.UserIdentity{Type: r.UserIdentity.Type, PrincipalID: r.UserIdentity.PrincipalID}
	}
	return d
}

func recordOf(d decode.Record) Record {
	r := Record{
		EventID: d.EventID, EventName: d.EventName, EventVersion: d.EventVersion, EventSource: d.EventSource,
		EventSourceARN: d.EventSourceARN, AWSRegion: d.AWSRegion,
		DynamoDB: StreamRecord(d.DynamoDB),
	}
	if d.UserIdentity != nil {
		r.UserIdentity = &UserIdentity{Type: d.UserIdentity.Type, PrincipalID: d.UserIdentity.PrincipalID}
	}
	return r
}

func recordsOf(ds []decode.Record) []Record {
	out := make([]Record, len(ds))
	for i := range ds {
		out[i] = recordOf(ds[i])
	}
	return out
}

func internalRecords(rs []Record) []decode.Record {
	out := make([]decode.Record, len(rs))
	for i := range rs {
		out[i] = rs[i].internal()
	}
	return out
}
