package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// Kinesis Data Streams for DynamoDB: a table's changes written to a
// Kinesis data stream, each as a JSON document in a Kinesis record's data
// (base64 in a Lambda event or a Pipe's batch). The document is the
// DynamoDB change record, without a sequence number or a stream view type
// of its own: the Kinesis record's sequence number identifies it.

// The event sources of a change-feed record.
const (
	SourceDynamoDB = "aws:dynamodb" // a DynamoDB stream record, or the change record inside a Kinesis record
	SourceKinesis  = "aws:kinesis"  // a Kinesis record
)

// KinesisRecordFormat is the only recordFormat DynamoDB writes to a
// Kinesis data stream.
const KinesisRecordFormat = "application/json"

// KinesisViewType is the StreamViewType given to records read from a
// Kinesis data stream: DynamoDB writes both images there (the new one on
// INSERT and MODIFY, the old one on MODIFY and REMOVE).
const KinesisViewType = "NEW_AND_OLD_IMAGES"

// The precisions of ApproximateCreationDateTime in a Kinesis data stream
// (the table's ApproximateCreationDateTimePrecision).
const (
	PrecisionMillisecond = "MILLISECOND" // DynamoDB's default
	PrecisionMicrosecond = "MICROSECOND"
)

// ErrKinesisData is matched by the error of a Kinesis record whose data is
// not a DynamoDB change record: not base64, not JSON, or JSON of another
// shape.
var ErrKinesisData = errors.New("Kinesis record data is not a DynamoDB change record")

// ErrNotKinesis is matched by the error of a record read as a Kinesis
// record that is not one (its eventSource is not aws:kinesis).
var ErrNotKinesis = errors.New("not a Kinesis record")

// wireKinesis is a Lambda Kinesis record's "kinesis" part; an EventBridge
// Pipe puts the same fields at the record's top.
type wireKinesis struct {
	KinesisSchemaVersion        string   `json:"kinesisSchemaVersion,omitempty"`
	PartitionKey                string   `json:"partitionKey,omitempty"`
	SequenceNumber              string   `json:"sequenceNumber,omitempty"`
	Data                        *string  `json:"data,omitempty"`
	ApproximateArrivalTimestamp *float64 `json:"approximateArrivalTimestamp,omitempty"`
}

// wireChange is the DynamoDB change record in a Kinesis record's data, as
// DynamoDB writes it.
type wireChange struct {
	AWSRegion    string          `json:"awsRegion"`
	EventID      string          `json:"eventID"`
	EventName    string          `json:"eventName"`
	UserIdentity *UserIdentity   `json:"userIdentity"`
	RecordFormat string          `json:"recordFormat"`
	TableName    string          `json:"tableName"`
	DynamoDB     wireChangeImage `json:"dynamodb"`
	EventSource  string          `json:"eventSource"`
}

type wireChangeImage struct {
	ApproximateCreationDateTime json.RawMessage `json:"ApproximateCreationDateTime,omitempty"` // a number
	Keys                        json.RawMessage `json:"Keys,omitempty"`
	NewImage                    json.RawMessage `json:"NewImage,omitempty"`
	OldImage                    json.RawMessage `json:"OldImage,omitempty"`
	SizeBytes                   int64           `json:"SizeBytes,omitempty"`
}

// KinesisEnvelope is what a Kinesis record adds around a change record.
type KinesisEnvelope struct {
	EventID        string // "shardId-…:<sequence number>": the Pipe identifier
	EventVersion   string
	EventSourceARN string // the Kinesis data stream
	AWSRegion      string
	SequenceNumber string // the Lambda identifier
}

// ParseKinesisRecord reads one Kinesis record in the JSON shape Lambda
// delivers ({"kinesis": {"data": …}, …}) or an EventBridge Pipe does (the
// Kinesis fields at the top), in one pass with the host's JSON walkers
// (the record's ParseEvent and UnmarshalJSON read the same). A record that
// is not a Kinesis record is refused with ErrNotKinesis.
func ParseKinesisRecord(raw []byte) (Record, error) {
	var env KinesisEnvelope
	var source string
	var data []byte // the raw JSON string
	kinesis := func(k, v []byte) error {
		var err error
		switch string(k) {
		case "sequenceNumber":
			env.SequenceNumber, err = jsonString(v)
		case "data":
			data = v
		}
		return fieldErr(k, err)
	}
	err := ddbjson.Object(raw, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "eventSource":
			source, err = jsonString(v)
		case "eventID":
			env.EventID, err = jsonString(v)
		case "eventVersion":
			env.EventVersion, err = jsonString(v)
		case "eventSourceARN":
			env.EventSourceARN, err = jsonString(v)
		case "awsRegion":
			env.AWSRegion, err = jsonString(v)
		case "kinesis":
			if !ddbjson.IsNull(v) {
				err = ddbjson.Object(v, kinesis)
			}
		case "sequenceNumber", "data": // a Pipe's shape
			err = kinesis(k, v)
		}
		return fieldErr(k, err)
	})
	if err != nil {
		return Record{}, err
	}
	if source != SourceKinesis {
		return Record{}, fmt.Errorf("%w: its eventSource is %q, not %q", ErrNotKinesis, source, SourceKinesis)
	}
	if data == nil || ddbjson.IsNull(data) {
		return Record{}, fmt.Errorf("%w: Kinesis record %s has no data", ErrKinesisData, env.name())
	}
	b, err := base64Data(data)
	if err != nil {
		return Record{}, fmt.Errorf("%w: the data of Kinesis record %s is not base64 (%v)", ErrKinesisData, env.name(), err)
	}
	return FromKinesisData(b, env)
}

// base64Data decodes a JSON string of base64, straight from the input
// when it has no escape (base64 has none to resolve).
func base64Data(v []byte) ([]byte, error) {
	v = bytes.TrimSpace(v)
	src := v
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		s, err := ddbjson.String(v)
		if err != nil {
			return nil, err
		}
		src = []byte(s)
	} else {
		src = v[1 : len(v)-1]
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(out, src)
	return out[:n], err
}

// EventSource returns the eventSource of a record (JSON), reading no
// further than it; "" when it has none or is not a JSON object.
func EventSource(raw []byte) string {
	var source string
	_ = ddbjson.Object(raw, func(k, v []byte) error {
		if string(k) != "eventSource" {
			return nil
		}
		source, _ = jsonString(v)
		return ddbjson.Stop
	})
	return source
}

// kinesisRecord converts a record read as wireRecord whose eventSource is
// aws:kinesis.
func (w *wireRecord) kinesisRecord() (Record, error) {
	k := w.Kinesis
	if k == nil { // a Pipe's shape
		k = &w.wireKinesis
	}
	env := KinesisEnvelope{EventID: w.EventID, EventVersion: w.EventVersion, EventSourceARN: w.EventSourceARN,
		AWSRegion: w.AWSRegion, SequenceNumber: k.SequenceNumber}
	if k.Data == nil {
		return Record{}, fmt.Errorf("%w: Kinesis record %s has no data", ErrKinesisData, env.name())
	}
	data, err := base64.StdEncoding.DecodeString(*k.Data)
	if err != nil {
		return Record{}, fmt.Errorf("%w: the data of Kinesis record %s is not base64 (%v)", ErrKinesisData, env.name(), err)
	}
	return FromKinesisData(data, env)
}

func (e KinesisEnvelope) name() string {
	if e.EventID != "" {
		return e.EventID
	}
	return e.SequenceNumber
}

// FromKinesisData converts a change record as DynamoDB writes it to a
// Kinesis data stream (data decoded from base64) into a Record: the
// envelope's sequence number is its SequenceNumber, the envelope's eventID
// its EventID (the change record's own eventID is not kept), the Kinesis
// stream its EventSourceARN, and its StreamViewType KinesisViewType.
func FromKinesisData(data []byte, env KinesisEnvelope) (Record, error) {
	var c wireChange
	if err := c.read(data); err != nil {
		var fe *fieldError
		switch {
		case errors.As(err, &fe) && errors.Is(err, ddbjson.ErrBadAttributeValue):
			return Record{}, fmt.Errorf("Kinesis record %s: %w", env.name(), err)
		case errors.As(err, &fe):
			return Record{}, fmt.Errorf("%w: the data of Kinesis record %s: %w", ErrKinesisData, env.name(), err)
		}
		return Record{}, fmt.Errorf("%w: the data of Kinesis record %s is not JSON (%v); a stream read here carries "+
			"the changes a DynamoDB table writes to it (its Kinesis streaming destination)", ErrKinesisData, env.name(), err)
	}
	if c.EventSource != SourceDynamoDB {
		return Record{}, fmt.Errorf("%w: the data of Kinesis record %s has eventSource %q, not %q: another producer "+
			"writes to this stream; keep its records from the function with the filter of `host filter-pattern --kinesis`",
			ErrKinesisData, env.name(), c.EventSource, SourceDynamoDB)
	}
	if c.RecordFormat != "" && c.RecordFormat != KinesisRecordFormat {
		return Record{}, fmt.Errorf("%w: the data of Kinesis record %s has recordFormat %q; only %q is read",
			ErrKinesisData, env.name(), c.RecordFormat, KinesisRecordFormat)
	}
	region := c.AWSRegion
	if region == "" {
		region = env.AWSRegion
	}
	out := Record{EventID: env.EventID, EventName: c.EventName, EventVersion: env.EventVersion, EventSource: SourceDynamoDB,
		EventSourceARN: env.EventSourceARN, AWSRegion: region, UserIdentity: c.UserIdentity}
	d := &out.DynamoDB
	if at := c.DynamoDB.ApproximateCreationDateTime; len(at) > 0 && !ddbjson.IsNull(at) {
		t, err := KinesisTime(json.Number(at))
		if err != nil {
			return Record{}, fmt.Errorf("%w: Kinesis record %s: %v", ErrKinesisData, env.name(), err)
		}
		d.ApproximateCreationDateTime = t
	}
	var err error
	if d.Keys, err = ddbjson.ItemFromJSON(c.DynamoDB.Keys); err != nil {
		return Record{}, fmt.Errorf("Kinesis record %s: dynamodb.Keys: %w", env.name(), err)
	}
	if d.NewImage, err = ddbjson.ItemFromJSON(c.DynamoDB.NewImage); err != nil {
		return Record{}, fmt.Errorf("Kinesis record %s: dynamodb.NewImage: %w", env.name(), err)
	}
	if d.OldImage, err = ddbjson.ItemFromJSON(c.DynamoDB.OldImage); err != nil {
		return Record{}, fmt.Errorf("Kinesis record %s: dynamodb.OldImage: %w", env.name(), err)
	}
	d.SequenceNumber, d.SizeBytes, d.StreamViewType = env.SequenceNumber, c.DynamoDB.SizeBytes, KinesisViewType
	return out, nil
}

// read fills c from a change record's JSON in one pass; the images and
// the creation time stay sub-slices of b.
func (c *wireChange) read(b []byte) error {
	return ddbjson.Object(b, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "awsRegion":
			c.AWSRegion, err = jsonString(v)
		case "eventID":
			c.EventID, err = jsonString(v)
		case "eventName":
			c.EventName, err = jsonString(v)
		case "recordFormat":
			c.RecordFormat, err = jsonString(v)
		case "tableName":
			c.TableName, err = jsonString(v)
		case "eventSource":
			c.EventSource, err = jsonString(v)
		case "userIdentity":
			if !ddbjson.IsNull(v) {
				c.UserIdentity = &UserIdentity{}
				err = ddbjson.Object(v, func(k, v []byte) error {
					var err error
					switch string(k) {
					case "type":
						c.UserIdentity.Type, err = jsonString(v)
					case "principalId":
						c.UserIdentity.PrincipalID, err = jsonString(v)
					}
					return fieldErr(k, err)
				})
			}
		case "dynamodb":
			if !ddbjson.IsNull(v) {
				err = ddbjson.Object(v, c.DynamoDB.member)
			}
		}
		return fieldErr(k, err)
	})
}

func (d *wireChangeImage) member(k, v []byte) error {
	var err error
	switch string(k) {
	case "ApproximateCreationDateTime":
		if len(v) > 0 && v[0] == '"' {
			err = fmt.Errorf("%s is not an epoch time", v)
		}
		d.ApproximateCreationDateTime = v
	case "Keys":
		d.Keys = v
	case "NewImage":
		d.NewImage = v
	case "OldImage":
		d.OldImage = v
	case "SizeBytes":
		if !ddbjson.IsNull(v) {
			d.SizeBytes, err = strconv.ParseInt(string(v), 10, 64)
		}
	}
	return fieldErr(k, err)
}

// fieldError is an error of one member of a record.
type fieldError struct {
	key string
	err error
}

func (e *fieldError) Error() string { return e.key + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func fieldErr(k []byte, err error) error {
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{key: string(k) + "." + fe.key, err: fe.err}
	}
	return &fieldError{key: string(k), err: err}
}

// jsonString reads a JSON string (null reads as "", as encoding/json has
// it).
func jsonString(v []byte) (string, error) {
	if ddbjson.IsNull(v) {
		return "", nil
	}
	if len(v) == 0 || v[0] != '"' {
		return "", errors.New("want a string")
	}
	return ddbjson.String(v)
}

// The magnitudes that tell the units of an epoch time apart: 10^11
// milliseconds is 1973-03-03 and 10^11 seconds the year 5138; 10^14
// microseconds is 1973-03-03 and 10^14 milliseconds the year 5138.
const (
	msFrom = 1e11
	usFrom = 1e14
)

// KinesisTime reads an ApproximateCreationDateTime of a Kinesis data
// stream, an epoch time in milliseconds or in microseconds as the table's
// ApproximateCreationDateTimePrecision says. The record does not say which,
// so the magnitude does: from 10^14 on it is microseconds, from 10^11 on
// milliseconds, below that seconds (as a DynamoDB stream record has it).
// Each unit covers 1973 to the year 5138 on its own, and no change is
// older than its table, so the reading is unambiguous for every real
// record.
func KinesisTime(n json.Number) (time.Time, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		switch {
		case i >= usFrom || i <= -usFrom:
			return time.UnixMicro(i).UTC(), nil
		case i >= msFrom || i <= -msFrom:
			return time.UnixMilli(i).UTC(), nil
		}
		return time.Unix(i, 0).UTC(), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, fmt.Errorf("ApproximateCreationDateTime %q is not an epoch time", string(n))
	}
	switch a := math.Abs(f); {
	case a >= usFrom:
		return time.UnixMicro(int64(math.Round(f))).UTC(), nil
	case a >= msFrom:
		return time.UnixMicro(int64(math.Round(f * 1e3))).UTC(), nil
	}
	return time.UnixMicro(int64(math.Round(f * 1e6))).UTC(), nil // a float64 of seconds holds microseconds, not nanoseconds
}

// KinesisData writes a record as the change record DynamoDB puts in a
// Kinesis data stream (the data of a Kinesis record, before base64), for
// the table, with its creation time in precision (PrecisionMillisecond
// when empty).
func KinesisData(r Record, table, precision string) ([]byte, error) {
	c := wireChange{AWSRegion: r.AWSRegion, EventID: r.EventID, EventName: r.EventName, UserIdentity: r.UserIdentity,
		RecordFormat: KinesisRecordFormat, TableName: table, EventSource: SourceDynamoDB}
	d := r.DynamoDB
	if !d.ApproximateCreationDateTime.IsZero() {
		switch precision {
		case "", PrecisionMillisecond:
			c.DynamoDB.ApproximateCreationDateTime = strconv.AppendInt(nil, d.ApproximateCreationDateTime.UnixMilli(), 10)
		case PrecisionMicrosecond:
			c.DynamoDB.ApproximateCreationDateTime = strconv.AppendInt(nil, d.ApproximateCreationDateTime.UnixMicro(), 10)
		default:
			return nil, fmt.Errorf("precision %q: use %q or %q", precision, PrecisionMillisecond, PrecisionMicrosecond)
		}
	}
	var err error
	if c.DynamoDB.Keys, err = itemJSON(d.Keys); err != nil {
		return nil, err
	}
	if c.DynamoDB.NewImage, err = itemJSON(d.NewImage); err != nil {
		return nil, err
	}
	if c.DynamoDB.OldImage, err = itemJSON(d.OldImage); err != nil {
		return nil, err
	}
	c.DynamoDB.SizeBytes = d.SizeBytes
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func itemJSON(it abi.Item) (json.RawMessage, error) {
	if it == nil {
		return nil, nil
	}
	return ddbjson.ItemToJSON(it)
}
