//go:build !noddblocal

package decode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/streamsdk"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// feed is a table with a stream, some history, and the records read back.
type feed struct {
	records []decode.Record
	ttlKeys []string // pk of the items DynamoDB's TTL removed
}

func buildFeed(t *testing.T) feed {
	t.Helper()
	ctx := context.Background()
	srv := dynamotest.Local(t, ddblocal.Options{TTLInterval: -1})
	client := dynamotest.ClientAt(t, srv.Endpoint())
	db := dynamo.New(client)
	table := dynamotest.CreateTable(t, client, "feed")
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(table),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}})
	require.NoError(t, err)

	es, err := eventstore.New(db, table, eventstore.DefaultLayout("shop", 1))
	require.NoError(t, err)
	_, err = es.Append(ctx, orderStream, "O-1", 0,
		eventstore.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}},
		eventstore.NewEvent{Type: "ItemAdded", Data: abi.Item{"price": abi.N("0.10000000000000000000000000000000000001")}})
	require.NoError(t, err)
	_, err = es.Append(ctx, sensorStream, "Site-9#S-1", 0, eventstore.NewEvent{Type: "SensorPlaced"})
	require.NoError(t, err)

	expired := abi.N(fmt.Sprint(time.Now().Add(-time.Hour).Unix()))
	put := func(it abi.Item) { require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: it})) }
	// A read-model row: created (INSERT, not an event), updated (MODIFY), removed by the app (REMOVE).
	row := abi.Item{"pk": abi.S("$shop#v1#ordersummary#o-1"), "sk": abi.S("$shop#v1#ordersummary"), "__edd_e__": abi.S("OrderSummary"), "n": abi.N("1")}
	put(row)
	row["n"] = abi.N("2")
	put(row)
	require.NoError(t, db.DeleteItem(ctx, store.Delete{Table: table, Key: abi.Item{"pk": row["pk"], "sk": row["sk"]}}))
	// Items DynamoDB expires: a tombstone, and (unusually) an item marked as an event.
	put(abi.Item{"pk": abi.S("$shop#v1#ordersummary#o-2"), "sk": abi.S("$shop#v1#ordersummary"), "__edd_e__": abi.S("OrderSummary#tombstone"), "expiresAt": expired})
	put(abi.Item{"pk": abi.S("$shop#v1#order#o-x"), "sk": abi.S("$shop#v1#order.event_1#0000000001"), "__edd_e__": abi.S("order.snapshot"), "expiresAt": expired})
	n, err := srv.SweepTTL(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "two items expired")

	return feed{records: readStream(t, srv.Endpoint(), client, table), ttlKeys: []string{"$shop#v1#ordersummary#o-2", "$shop#v1#order#o-x"}}
}

// readStream reads every record of the table's stream with the Streams API.
func readStream(t *testing.T, endpoint string, client *dynamodb.Client, table string) []decode.Record {
	t.Helper()
	ctx := context.Background()
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	require.NoError(t, err)
	require.NotNil(t, desc.Table.LatestStreamArn)
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")})
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	require.NoError(t, err)
	var raw []types.Record
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: desc.Table.LatestStreamArn,
			ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		iter := it.ShardIterator
		for iter != nil {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			require.NoError(t, err)
			raw = append(raw, out.Records...)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	pub, err := streamsdk.Records(raw)
	require.NoError(t, err)
	// host.Record and decode.Record share the wire shape: cross over by JSON.
	b, err := json.Marshal(pub)
	require.NoError(t, err)
	var recs []decode.Record
	require.NoError(t, json.Unmarshal(b, &recs))
	return recs
}

func TestB2_IdentifiersOfRealStreamRecords(t *testing.T) {
	f := buildFeed(t)
	d := decoder(t)

	lambda := decode.Decode(f.records, decode.Options{Decoder: d, Source: decode.SourceLambda})
	require.Empty(t, lambda.Failures)
	require.Len(t, lambda.Events, 3, "three appended events, nothing else")
	var got []string
	for _, e := range lambda.Events {
		rec := f.records[e.Position]
		assert.Equal(t, rec.DynamoDB.SequenceNumber, e.Identifier, "Lambda identifier is the SequenceNumber")
		assert.NotEmpty(t, e.Identifier)
		got = append(got, fmt.Sprintf("%s/%s/%d", e.Event.Stream, e.Event.StreamID, e.Event.Version))
	}
	sort.Strings(got)
	assert.Equal(t, []string{"Order/O-1/1", "Order/O-1/2", "Sensor/Site-9#S-1/1"}, got)
	for _, e := range lambda.Events {
		if e.Event.Version == 2 && e.Event.Stream == "Order" {
			assert.Equal(t, abi.N("0.10000000000000000000000000000000000001"), e.Event.Data["price"], "numbers arrive at full precision")
		}
	}

	pipe := decode.Decode(f.records, decode.Options{Decoder: d, Source: decode.SourcePipe})
	require.Len(t, pipe.Events, 3)
	for _, e := range pipe.Events {
		assert.Equal(t, f.records[e.Position].EventID, e.Identifier, "Pipe identifier is the eventID")
		assert.NotEmpty(t, e.Identifier)
	}
}

func TestX5_TTLDeletionFromTheStreamIsNotAnEvent(t *testing.T) {
	f := buildFeed(t)
	d := decoder(t)
	res := decode.Decode(f.records, decode.Options{Decoder: d})
	ttl := res.TTLDeletions()
	require.Len(t, ttl, 2)
	var removed []string
	for _, ig := range ttl {
		rec := f.records[ig.Position]
		assert.Equal(t, "REMOVE", rec.EventName)
		require.NotNil(t, rec.UserIdentity)
		assert.Equal(t, "Service", rec.UserIdentity.Type)
		assert.Equal(t, "dynamodb.amazonaws.com", rec.UserIdentity.PrincipalID)
		removed = append(removed, rec.DynamoDB.Keys["pk"].Str)
	}
	sort.Strings(removed)
	want := append([]string(nil), f.ttlKeys...)
	sort.Strings(want)
	assert.Equal(t, want, removed)
	// The application's own REMOVE is not a TTL deletion, and not an event either.
	userRemoves := res.IgnoredFor(decode.ReasonRemove)
	require.Len(t, userRemoves, 1)
	assert.Nil(t, f.records[userRemoves[0].Position].UserIdentity)
	assert.Len(t, res.IgnoredFor(decode.ReasonModify), 1)
	for _, e := range res.Events {
		assert.False(t, strings.Contains(e.Event.StreamID, "o-x"))
	}
}
