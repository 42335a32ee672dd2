package decode_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// A change record as DynamoDB writes it to a Kinesis data stream (the
// field order of a real record), creation time in milliseconds.
const insertData = `{"awsRegion":"us-east-1","eventID":"6f773704-d244-414f-9590-5e9e9045409d","eventName":"INSERT",` +
	`"userIdentity":null,"recordFormat":"application/json","tableName":"events",` +
	`"dynamodb":{"ApproximateCreationDateTime":1795953600123,` +
	`"Keys":{"pk":{"S":"$shop#v1#order#o-1"},"sk":{"S":"$shop#v1#order.event_1#0000000001"}},` +
	`"NewImage":{"pk":{"S":"$shop#v1#order#o-1"},"sk":{"S":"$shop#v1#order.event_1#0000000001"},"__edd_e__":{"S":"order.event"},` +
	`"streamId":{"S":"o-1"},"version":{"N":"1"},"eventType":{"S":"OrderPlaced"},"data":{"M":{"_tag":{"S":"OrderPlaced"},"customer":{"S":"c-1"}}},` +
	`"timestamp":{"S":"2026-11-29T12:00:00.000Z"}},"SizeBytes":238},"eventSource":"aws:dynamodb"}`

// A TTL deletion of the same item, creation time in microseconds.
const ttlData = `{"awsRegion":"us-east-1","eventID":"9a1c","eventName":"REMOVE",` +
	`"userIdentity":{"type":"Service","principalId":"dynamodb.amazonaws.com"},"recordFormat":"application/json","tableName":"events",` +
	`"dynamodb":{"ApproximateCreationDateTime":1795953700123456,` +
	`"Keys":{"pk":{"S":"$shop#v1#order#o-1"},"sk":{"S":"$shop#v1#order.event_1#0000000001"}},` +
	`"OldImage":{"pk":{"S":"$shop#v1#order#o-1"},"sk":{"S":"$shop#v1#order.event_1#0000000001"},"__edd_e__":{"S":"order.event"},` +
	`"streamId":{"S":"o-1"},"version":{"N":"1"},"eventType":{"S":"OrderPlaced"},"data":{"M":{"_tag":{"S":"OrderPlaced"},"customer":{"S":"c-1"}}}},` +
	`"SizeBytes":200},"eventSource":"aws:dynamodb"}`

func lambdaKinesisRecord(data, seq string) string {
	return `{"kinesis":{"kinesisSchemaVersion":"1.0","partitionKey":"FC6DB76DA3C47A034DF4D0B90F73B1A7","sequenceNumber":"` + seq +
		`","data":"` + base64.StdEncoding.EncodeToString([]byte(data)) + `","approximateArrivalTimestamp":1795953600.987},` +
		`"eventSource":"aws:kinesis","eventVersion":"1.0","eventID":"shardId-000000000003:` + seq + `","eventName":"aws:kinesis:record",` +
		`"invokeIdentityArn":"arn:aws:iam::000000000000:role/fn","awsRegion":"us-east-1","eventSourceARN":"arn:aws:kinesis:us-east-1:000000000000:stream/changes"}`
}

func pipeKinesisRecord(data, seq string) string {
	return `{"kinesisSchemaVersion":"1.0","partitionKey":"A1","sequenceNumber":"` + seq + `","data":"` +
		base64.StdEncoding.EncodeToString([]byte(data)) + `","approximateArrivalTimestamp":1795953600.987,` +
		`"eventSource":"aws:kinesis","eventVersion":"1.0","eventID":"shardId-000000000003:` + seq + `","eventName":"aws:kinesis:record",` +
		`"awsRegion":"us-east-1","eventSourceARN":"arn:aws:kinesis:us-east-1:000000000000:stream/changes"}`
}

const (
	seq1 = "49628566489653659107048838082246518393102916603510521906"
	seq2 = "49628566489653659107048838082246518393102916603510521907"
)

func TestK1_ParseEventReadsALambdaKinesisEvent(t *testing.T) {
	recs, err := decode.ParseEvent([]byte(`{"Records":[` + lambdaKinesisRecord(insertData, seq1) + `,` + lambdaKinesisRecord(ttlData, seq2) + `]}`))
	require.NoError(t, err)
	require.Len(t, recs, 2)
	in := recs[0]
	assert.Equal(t, "INSERT", in.EventName)
	assert.Equal(t, seq1, in.DynamoDB.SequenceNumber, "the Kinesis sequence number is the Lambda identifier")
	assert.Equal(t, "shardId-000000000003:"+seq1, in.EventID, "the Kinesis eventID is the Pipe identifier")
	assert.Equal(t, "arn:aws:kinesis:us-east-1:000000000000:stream/changes", in.EventSourceARN)
	assert.Equal(t, "aws:dynamodb", in.EventSource)
	assert.Equal(t, "us-east-1", in.AWSRegion)
	assert.Equal(t, "NEW_AND_OLD_IMAGES", in.DynamoDB.StreamViewType)
	assert.Equal(t, int64(238), in.DynamoDB.SizeBytes)
	assert.Equal(t, time.UnixMilli(1795953600123).UTC(), in.DynamoDB.ApproximateCreationDateTime)
	assert.Equal(t, abi.S("c-1"), in.DynamoDB.NewImage["data"].Map["customer"])
	assert.Equal(t, abi.S("$shop#v1#order.event_1#0000000001"), in.DynamoDB.Keys["sk"])
	assert.Nil(t, in.UserIdentity)
	assert.Nil(t, in.DynamoDB.OldImage)

	ttl := recs[1]
	assert.True(t, ttl.IsTTLDeletion())
	assert.Equal(t, time.UnixMicro(1795953700123456).UTC(), ttl.DynamoDB.ApproximateCreationDateTime)
	res := decode.Decode(recs, decode.Options{Decoder: decoder(t)})
	require.Len(t, res.Events, 1)
	assert.Equal(t, seq1, res.Events[0].Identifier)
	assert.Equal(t, uint64(1), res.Events[0].Event.Version)
	require.Len(t, res.Ignored, 1)
	assert.Equal(t, decode.ReasonTTLDeletion, res.Ignored[0].Reason)
	assert.Equal(t, seq2, res.Ignored[0].Identifier)

	// A Pipe's batch: the same records with the Kinesis fields at the top.
	pipe, err := decode.ParseEvent([]byte(`[` + pipeKinesisRecord(insertData, seq1) + `]`))
	require.NoError(t, err)
	require.Len(t, pipe, 1)
	assert.Equal(t, in, pipe[0])
	res = decode.Decode(pipe, decode.Options{Decoder: decoder(t), Source: decode.SourcePipe})
	require.Len(t, res.Events, 1)
	assert.Equal(t, "shardId-000000000003:"+seq1, res.Events[0].Identifier)
}

func TestK1_KinesisTimeTellsMillisecondsAndMicrosecondsApart(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"1795953600123", at.Truncate(time.Millisecond)},
		{"1795953600123456", at},
		{"1795953600", at.Truncate(time.Second)}, // seconds, as a stream record has it
		{"1795953600.123", at.Truncate(time.Millisecond)},
		{"100000000000", time.UnixMilli(1e11).UTC()},     // 1973 in ms, not the year 5138 in s
		{"99999999999", time.Unix(99999999999, 0).UTC()}, // seconds
		{"100000000000000", time.UnixMicro(1e14).UTC()},  // 1973 in µs
		{"99999999999999", time.UnixMilli(99999999999999).UTC()},
		{"1.795953600123456e15", time.UnixMicro(1795953600123456).UTC()},
	} {
		got, err := decode.KinesisTime(json.Number(c.in))
		require.NoError(t, err, c.in)
		assert.True(t, c.want.Equal(got), "%s: %v, want %v", c.in, got, c.want)
	}
	_, err := decode.KinesisTime("soon")
	require.Error(t, err)
}

func TestK1_KinesisDataRoundTrip(t *testing.T) {
	recs, err := decode.ParseEvent([]byte(`[` + lambdaKinesisRecord(insertData, seq1) + `,` + lambdaKinesisRecord(ttlData, seq2) + `]`))
	require.NoError(t, err)
	for _, precision := range []string{decode.PrecisionMillisecond, decode.PrecisionMicrosecond} {
		for _, r := range recs {
			data, err := decode.KinesisData(r, "events", precision)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(data, &doc))
			assert.Equal(t, "application/json", doc["recordFormat"])
			assert.Equal(t, "events", doc["tableName"])
			assert.Equal(t, "aws:dynamodb", doc["eventSource"])
			assert.Contains(t, doc, "userIdentity", "null or the service principal, never absent")
			back, err := decode.FromKinesisData(data, decode.KinesisEnvelope{EventID: r.EventID, EventVersion: r.EventVersion,
				EventSourceARN: r.EventSourceARN, AWSRegion: r.AWSRegion, SequenceNumber: r.DynamoDB.SequenceNumber})
			require.NoError(t, err)
			want := r
			if precision == decode.PrecisionMillisecond {
				want.DynamoDB.ApproximateCreationDateTime = want.DynamoDB.ApproximateCreationDateTime.Truncate(time.Millisecond)
			}
			assert.Equal(t, want, back, precision)
		}
	}
	_, err = decode.KinesisData(recs[0], "events", "SECOND")
	require.ErrorContains(t, err, "MICROSECOND")
}

func TestK1_UnreadableKinesisDataSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		name, record, want string
	}{
		{"not base64", strings.Replace(lambdaKinesisRecord("", seq1), `"data":""`, `"data":"@@@"`, 1), "is not base64"},
		{"not JSON", lambdaKinesisRecord("OrderPlaced o-1", seq1), "is not JSON"},
		{"another producer", lambdaKinesisRecord(`{"order":{"type":"buy"}}`, seq1), `has eventSource ""`},
		{"another format", lambdaKinesisRecord(strings.Replace(insertData, "application/json", "application/x-amz-ion", 1), seq1), `recordFormat "application/x-amz-ion"`},
		{"no data", `{"eventSource":"aws:kinesis","eventID":"shardId-1:1","kinesis":{"sequenceNumber":"1"}}`, "has no data"},
		{"bad time", lambdaKinesisRecord(strings.Replace(insertData, "1795953600123", `"soon"`, 1), seq1), "is not an epoch time"},
	} {
		_, err := decode.ParseEvent([]byte(`[` + c.record + `]`))
		require.ErrorIs(t, err, decode.ErrKinesisData, c.name)
		assert.ErrorContains(t, err, c.want, c.name)
		assert.ErrorContains(t, err, "shardId-", c.name+": the message names the record")
		// The handler's one-pass reader says the same.
		_, err2 := decode.ParseKinesisRecord([]byte(c.record))
		require.ErrorIs(t, err2, decode.ErrKinesisData, c.name)
		assert.Equal(t, strings.TrimPrefix(err.Error(), "decode: parse records: "), err2.Error(), c.name)
	}
	for _, c := range []struct{ name, record string }{
		{"Lambda", lambdaKinesisRecord(insertData, seq1)}, {"Pipe", pipeKinesisRecord(insertData, seq1)},
		{"TTL", lambdaKinesisRecord(ttlData, seq2)}, {"escaped data", strings.Replace(strings.Replace(lambdaKinesisRecord(insertData, seq1), "/", `\/`, -1), `"data":"eyJ`, `"data":"\u0065yJ`, 1)},
	} {
		file, err := decode.ParseEvent([]byte(`[` + c.record + `]`))
		require.NoError(t, err, c.name)
		one, err := decode.ParseKinesisRecord([]byte(c.record))
		require.NoError(t, err, c.name)
		assert.Equal(t, file[0], one, c.name)
	}
	assert.Equal(t, "aws:kinesis", decode.EventSource([]byte(lambdaKinesisRecord(insertData, seq1))))
	assert.Equal(t, "aws:dynamodb", decode.EventSource([]byte(`{"eventID":"1","eventSource":"aws:dynamodb","dynamodb":{broken`)), "read no further")
	assert.Equal(t, "", decode.EventSource([]byte(`"garbage"`)))
	_, err := decode.ParseEvent([]byte(`[` + lambdaKinesisRecord(strings.Replace(insertData, `{"S":"c-1"}`, `{"Q":"c-1"}`, 1), seq1) + `]`))
	require.ErrorIs(t, err, ddbjson.ErrBadAttributeValue)
	assert.ErrorContains(t, err, "dynamodb.NewImage")

	_, err = decode.ParseKinesisRecord([]byte(`{"eventSource":"aws:dynamodb","dynamodb":{"SequenceNumber":"1"}}`))
	require.ErrorIs(t, err, decode.ErrNotKinesis)
}
