package lambdaevents_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambdaevents"
)

// TestK1_FromKinesisRecordReadsLikeTheJSONParser reads the captured
// Kinesis event as aws-lambda-go parses it (events.KinesisEvent) and as
// the handler does (ParseKinesisRecord, and host.ParseEvent for files):
// the three agree record for record.
func TestK1_FromKinesisRecordReadsLikeTheJSONParser(t *testing.T) {
	raw, err := os.ReadFile("../lambda/testdata/kinesis_event.json")
	require.NoError(t, err)
	var ev events.KinesisEvent
	require.NoError(t, json.Unmarshal(raw, &ev))
	var raws struct{ Records []json.RawMessage }
	require.NoError(t, json.Unmarshal(raw, &raws))
	files, err := host.ParseEvent(raw)
	require.NoError(t, err)
	require.Len(t, ev.Records, 8)
	for i, kr := range ev.Records {
		got, err := lambdaevents.FromKinesisRecord(kr)
		require.NoError(t, err)
		parsed, err := lambdaevents.ParseKinesisRecord(raws.Records[i])
		require.NoError(t, err)
		assert.Equal(t, parsed, got, "record %d", i)
		assert.Equal(t, files[i], got, "record %d", i)
		assert.Equal(t, kr.Kinesis.SequenceNumber, got.DynamoDB.SequenceNumber)
		assert.Equal(t, kr.EventID, got.EventID)
		assert.Equal(t, "INSERT", got.EventName)
		assert.Equal(t, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), got.DynamoDB.ApproximateCreationDateTime, "milliseconds, not seconds")
	}

	kr := ev.Records[0]
	kr.EventSource = "aws:sqs"
	_, err = lambdaevents.FromKinesisRecord(kr)
	require.ErrorIs(t, err, lambdaevents.ErrNotKinesis)
	kr = ev.Records[0]
	kr.Kinesis.Data = []byte("not json")
	_, err = lambdaevents.FromKinesisRecord(kr)
	require.ErrorIs(t, err, lambdaevents.ErrKinesisData)
}

// TestK1_ToKinesisRecordWritesWhatDynamoDBWrites: a record written as a
// Kinesis record reads back the same, in either precision, and its data
// is the change record DynamoDB writes (creation time in the precision's
// unit, tableName, recordFormat, userIdentity).
func TestK1_ToKinesisRecordWritesWhatDynamoDBWrites(t *testing.T) {
	raw, err := os.ReadFile("../lambda/testdata/stream_event.json")
	require.NoError(t, err)
	recs, err := host.ParseEvent(raw)
	require.NoError(t, err)
	r := recs[0]
	r.DynamoDB.ApproximateCreationDateTime = time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	r.DynamoDB.SequenceNumber = "49650000000000000000000000000000000000000000000000000042"
	for _, c := range []struct {
		precision string
		at        float64
		want      time.Time
	}{
		{lambdaevents.PrecisionMillisecond, 1795953600123, r.DynamoDB.ApproximateCreationDateTime.Truncate(time.Millisecond)},
		{lambdaevents.PrecisionMicrosecond, 1795953600123456, r.DynamoDB.ApproximateCreationDateTime},
	} {
		kr, err := lambdaevents.ToKinesisRecord(r, lambdaevents.KinesisOptions{Table: "events", StreamARN: "arn:aws:kinesis:us-east-1:1:stream/s", Precision: c.precision})
		require.NoError(t, err)
		assert.Equal(t, "aws:kinesis", kr.EventSource)
		assert.Equal(t, "shardId-000000000000:"+r.DynamoDB.SequenceNumber, kr.EventID)
		var doc struct {
			TableName, RecordFormat, EventSource, EventName string
			UserIdentity                                    *struct{}
			DynamoDB                                        struct{ ApproximateCreationDateTime float64 }
		}
		require.NoError(t, json.Unmarshal(kr.Kinesis.Data, &doc))
		assert.Equal(t, c.at, doc.DynamoDB.ApproximateCreationDateTime, c.precision)
		assert.Equal(t, "events", doc.TableName)
		assert.Equal(t, "application/json", doc.RecordFormat)
		assert.Equal(t, "aws:dynamodb", doc.EventSource)

		b, err := json.Marshal(kr) // the wire: data in base64
		require.NoError(t, err)
		back, err := lambdaevents.ParseKinesisRecord(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, back.DynamoDB.ApproximateCreationDateTime, c.precision)
		assert.Equal(t, r.DynamoDB.NewImage, back.DynamoDB.NewImage)
		assert.Equal(t, r.DynamoDB.Keys, back.DynamoDB.Keys)
		assert.Equal(t, r.DynamoDB.SequenceNumber, back.DynamoDB.SequenceNumber)
		assert.Equal(t, "arn:aws:kinesis:us-east-1:1:stream/s", back.EventSourceARN)
	}
}
