package lambdaevents

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// Kinesis Data Streams for DynamoDB: a table writes each change to a
// Kinesis data stream as a JSON document, the DynamoDB change record, in
// the Kinesis record's data. aws-lambda-go has the Kinesis envelope
// (events.KinesisEventRecord) but no type for that document (decoding it
// into events.DynamoDBEventRecord would read its creation time, in
// milliseconds or microseconds, as seconds); the converters here read and
// write it with the host's DynamoDB JSON codec.
//
// A converted record is a host.Record like a DynamoDB stream record's:
// its SequenceNumber is the Kinesis record's sequence number (what a Lambda
// partial batch response names), its EventID the Kinesis record's eventID
// (what a Pipe names), its EventSourceARN the Kinesis data stream, and its
// StreamViewType NEW_AND_OLD_IMAGES. ApproximateCreationDateTime is read in
// the unit its magnitude shows (see the host's decode.KinesisTime rule:
// from 10^14 microseconds, from 10^11 milliseconds, else seconds).

// The event source of a Kinesis record, and of the change record it
// carries.
const (
	EventSourceKinesis  = decode.SourceKinesis
	EventSourceDynamoDB = decode.SourceDynamoDB
)

// The precisions a table may stream its changes' creation times in
// (ApproximateCreationDateTimePrecision).
const (
	PrecisionMillisecond = decode.PrecisionMillisecond
	PrecisionMicrosecond = decode.PrecisionMicrosecond
)

// ErrKinesisData is matched by the error of a Kinesis record whose data is
// not a DynamoDB change record: not base64, not JSON, or JSON of another
// producer.
var ErrKinesisData = decode.ErrKinesisData

// ErrNotKinesis is matched by the error of ParseKinesisRecord for a record
// whose eventSource is not aws:kinesis.
var ErrNotKinesis = decode.ErrNotKinesis

// FromKinesisRecord converts a record of a Lambda Kinesis event
// (events.KinesisEvent, its data already decoded from base64) that carries
// a DynamoDB change record.
func FromKinesisRecord(r events.KinesisEventRecord) (host.Record, error) {
	if r.EventSource != EventSourceKinesis {
		return host.Record{}, fmt.Errorf("%w: its eventSource is %q", ErrNotKinesis, r.EventSource)
	}
	d, err := decode.FromKinesisData(r.Kinesis.Data, decode.KinesisEnvelope{EventID: r.EventID, EventVersion: r.EventVersion,
		EventSourceARN: r.EventSourceArn, AWSRegion: r.AwsRegion, SequenceNumber: r.Kinesis.SequenceNumber})
	if err != nil {
		return host.Record{}, err
	}
	return toHost(d), nil
}

// ParseKinesisRecord reads one Kinesis record from its JSON, in the shape
// a Lambda event source mapping delivers ({"kinesis": {"data": …}, …}) or
// an EventBridge Pipe does (the Kinesis fields at the top). It is
// FromKinesisRecord without aws-lambda-go's types in between, and what the
// Lambda handler reads a Kinesis event with.
func ParseKinesisRecord(raw []byte) (host.Record, error) {
	d, err := decode.ParseKinesisRecord(raw)
	if err != nil {
		return host.Record{}, err
	}
	return toHost(d), nil
}

// KinesisOptions says how ToKinesisRecord writes a record.
type KinesisOptions struct {
	Table     string // the change record's tableName
	StreamARN string // the records' eventSourceARN: the Kinesis data stream
	Shard     string // the shard in the records' eventID (default "shardId-000000000000")
	Precision string // PrecisionMillisecond (default) or PrecisionMicrosecond
}

// ToKinesisRecord writes a record as DynamoDB writes its change to a
// Kinesis data stream and Lambda delivers it: the change record as the
// data, the record's SequenceNumber as the Kinesis sequence number, an MD5
// of its key as the partition key. For captured batches and tests.
func ToKinesisRecord(r host.Record, o KinesisOptions) (events.KinesisEventRecord, error) {
	data, err := decode.KinesisData(toInternal(r), o.Table, o.Precision)
	if err != nil {
		return events.KinesisEventRecord{}, err
	}
	keys, err := ddbjson.ItemToJSON(r.DynamoDB.Keys)
	if err != nil {
		return events.KinesisEventRecord{}, err
	}
	sum := md5.Sum(keys)
	shard := o.Shard
	if shard == "" {
		shard = "shardId-000000000000"
	}
	seq := r.DynamoDB.SequenceNumber
	arrival := r.DynamoDB.ApproximateCreationDateTime
	if arrival.IsZero() {
		arrival = time.Unix(0, 0)
	}
	return events.KinesisEventRecord{
		AwsRegion: r.AWSRegion, EventID: shard + ":" + seq, EventName: "aws:kinesis:record",
		EventSource: EventSourceKinesis, EventSourceArn: o.StreamARN, EventVersion: "1.0",
		Kinesis: events.KinesisRecord{
			ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: arrival},
			Data:                        data, PartitionKey: strings.ToUpper(hex.EncodeToString(sum[:])),
			SequenceNumber: seq, KinesisSchemaVersion: "1.0",
		},
	}, nil
}

func toHost(d decode.Record) host.Record {
	return host.Record{EventID: d.EventID, EventName: d.EventName, EventVersion: d.EventVersion, EventSource: d.EventSource,
		EventSourceARN: d.EventSourceARN, AWSRegion: d.AWSRegion, DynamoDB: host.StreamRecord(d.DynamoDB),
		UserIdentity: (*host.UserIdentity)(d.UserIdentity)}
}

func toInternal(r host.Record) decode.Record {
	return decode.Record{EventID: r.EventID, EventName: r.EventName, EventVersion: r.EventVersion, EventSource: r.EventSource,
		EventSourceARN: r.EventSourceARN, AWSRegion: r.AWSRegion, DynamoDB: decode.StreamRecord(r.DynamoDB),
		UserIdentity: (*decode.UserIdentity)(r.UserIdentity)}
}
