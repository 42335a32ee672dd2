package ddblocal

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// streamsClient is a Streams client of s. It keeps the SDK's retries, so a
// connection the transport closed under a read on a loaded machine ("use
// of closed network connection", seen once in a full run) is tried again;
// none of the Streams errors these tests expect is retryable.
func streamsClient(s *Server) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
	})
}

// readStream returns the event names and user identities of every record of
// the table's latest stream.
func readStream(t *testing.T, srv *Server, c *dynamodb.Client, table string) ([]string, []*stypes.Identity) {
	t.Helper()
	ctx := ctxT(t)
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	sc := streamsClient(srv)
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: d.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	// ddblocal numbers the records of all shards from one counter, so
	// sorting every shard's records by sequence number gives write order.
	var recs []stypes.Record
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: d.Table.LatestStreamArn, ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		iter := it.ShardIterator
		for i := 0; iter != nil && i < 5; i++ {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, out.Records...)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	sort.Slice(recs, func(i, j int) bool { return *recs[i].Dynamodb.SequenceNumber < *recs[j].Dynamodb.SequenceNumber })
	var names []string
	var ids []*stypes.Identity
	for _, r := range recs {
		names = append(names, string(r.EventName))
		ids = append(ids, r.UserIdentity)
	}
	return names, ids
}

func TestPersist_SurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "pers", true, func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	})
	for _, sk := range []string{"1", "2", "3"} {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("pers"), Item: map[string]types.AttributeValue{"pk": s("p"), "sk": s(sk), "big": n("12345678901234567890123456789012345678")}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("pers"), Key: map[string]types.AttributeValue{"pk": s("p"), "sk": s("2")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("pers"), TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: aws.String("exp")}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv2 := startServer(t, Options{DataDir: dir})
	c2 := client(srv2, 1)
	out, err := c2.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("pers"), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 2 || out.Items[1]["big"].(*types.AttributeValueMemberN).Value != "12345678901234567890123456789012345678" {
		t.Fatalf("after restart: %v", out.Items)
	}
	ttl, err := c2.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("pers")})
	if err != nil || ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "exp" {
		t.Fatalf("TTL after restart: %+v %v", ttl, err)
	}
	names, _ := readStream(t, srv2, c2, "pers")
	if want := []string{"INSERT", "INSERT", "INSERT", "REMOVE"}; len(names) != 4 || names[3] != "REMOVE" {
		t.Fatalf("stream after restart: %v, want %v", names, want)
	}
}

func TestTTL_SweepRecordsServiceRemove(t *testing.T) {
	var clock atomic.Int64
	clock.Store(1_800_000_000)
	srv := startServer(t, Options{Now: func() time.Time { return time.Unix(clock.Load(), 0) }})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "ttl", false, func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}
	})
	if _, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("ttl"), TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: aws.String("exp")}}); err != nil {
		t.Fatal(err)
	}
	items := map[string]types.AttributeValue{
		"past":   n("1799999999"),
		"future": n("1800000100"),
		"string": s("1"),
	}
	for k, v := range items {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("ttl"), Item: map[string]types.AttributeValue{"pk": s(k), "exp": v}}); err != nil {
			t.Fatal(err)
		}
	}
	// A put of an identical item and a delete of an absent one change nothing.
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("ttl"), Item: map[string]types.AttributeValue{"pk": s("future"), "exp": n("1800000100")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("ttl"), Key: map[string]types.AttributeValue{"pk": s("absent")}}); err != nil {
		t.Fatal(err)
	}
	n1, err := srv.SweepTTL(ctx)
	if err != nil || n1 != 1 {
		t.Fatalf("SweepTTL = %d, %v; want 1", n1, err)
	}
	names, ids := readStream(t, srv, c, "ttl")
	if len(names) != 4 || names[3] != "REMOVE" || ids[3] == nil || aws.ToString(ids[3].PrincipalId) != "dynamodb.amazonaws.com" || aws.ToString(ids[3].Type) != "Service" || ids[0] != nil {
		t.Fatalf("records %v identities %v", names, ids)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("ttl"), Key: map[string]types.AttributeValue{"pk": s("past")}})
	if err != nil || out.Item != nil {
		t.Fatalf("expired item still there: %v %v", out.Item, err)
	}
	// One TTL change per hour, as the UpdateTimeToLive reference says.
	disable := &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("ttl"), TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(false), AttributeName: aws.String("exp")}}
	if _, err := c.UpdateTimeToLive(ctx, disable); err == nil {
		t.Fatal("a second TTL change within the hour must be refused")
	}
	clock.Add(3601)
	if _, err := c.UpdateTimeToLive(ctx, disable); err != nil {
		t.Fatalf("TTL change an hour later: %v", err)
	}
}
