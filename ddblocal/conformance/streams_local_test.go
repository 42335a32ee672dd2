package conformance

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/dynafold/dynafold/ddblocal"
)

// These tests need ddblocal's options (shard size, retention, a clock), so
// they run only when the suite runs ddblocal in-process.

// fakeClock is a settable clock for ddblocal.Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// ownStreamTable creates a stream-enabled table on a private server.
func ownStreamTable(t testing.TB, srv *ddblocal.Server) (*dynamodb.Client, *dynamodbstreams.Client, string, string) {
	t.Helper()
	c, sc := ddbAt(srv.Endpoint()), streamsAt(srv.Endpoint())
	ks, ad := keySchema("")
	name := tableName(t)
	_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest, StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	noErr(t, err, "CreateTable")
	for i := 0; ; i++ {
		d, err := c.DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		noErr(t, err, "DescribeTable")
		if d.Table.TableStatus == types.TableStatusActive {
			return c, sc, name, aws.ToString(d.Table.LatestStreamArn)
		}
		if i > 500 {
			t.Fatalf("table %s never became ACTIVE", name)
		}
		sleepMs(10)
	}
}

func putAt(t testing.TB, c *dynamodb.Client, table string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(table), Item: Item{"pk": s(k)}})
		noErr(t, err, "PutItem")
	}
}

func TestConformance_StreamsLocal_ShardRolloverLineage(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Streams: ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 3}})
	c, sc, name, arn := ownStreamTable(t, srv)
	for i := 0; i < 8; i++ {
		putAt(t, c, name, fmt.Sprint(i))
	}
	_, shards := shardsOf(t, sc, arn)
	if len(shards) < 3 {
		t.Fatalf("8 records at 3 per shard gave %d shards, want at least 3", len(shards))
	}
	ids := map[string]bool{}
	open := 0
	for i, sh := range shards {
		ids[aws.ToString(sh.ShardId)] = true
		r := sh.SequenceNumberRange
		if r == nil || r.StartingSequenceNumber == nil {
			t.Fatalf("shard %d has no StartingSequenceNumber: %+v", i, sh)
		}
		if r.EndingSequenceNumber == nil {
			open++
		}
		if i > 0 && !ids[aws.ToString(sh.ParentShardId)] {
			t.Fatalf("shard %s: ParentShardId %q is not an earlier shard", aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId))
		}
	}
	if open != 1 || shards[len(shards)-1].SequenceNumberRange.EndingSequenceNumber != nil {
		t.Fatalf("want exactly one open shard, the newest; shards: %+v", shards)
	}
	// A closed shard read to its end answers no NextShardIterator.
	it, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shards[0].ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	noErr(t, err, "GetShardIterator")
	iter := it.ShardIterator
	for i := 0; iter != nil; i++ {
		out, err := sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		noErr(t, err, "GetRecords")
		iter = out.NextShardIterator
		if i > 20 {
			t.Fatal("a closed shard never ended (NextShardIterator never null)")
		}
	}
	want := "[INSERT S:0 INSERT S:1 INSERT S:2 INSERT S:3 INSERT S:4 INSERT S:5 INSERT S:6 INSERT S:7]"
	var recs []st.Record
	for _, sh := range shards {
		it, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
		noErr(t, err, "GetShardIterator")
		r, _ := readShard(t, sc, it.ShardIterator, 0)
		recs = append(recs, r...)
	}
	if got := fmt.Sprint(recordSummary(recs)); got != want {
		t.Fatalf("records across the lineage = %s, want %s", got, want)
	}
}

func TestConformance_StreamsLocal_ExpiredIterator(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now()}
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Now: clock.Now})
	c, sc, name, arn := ownStreamTable(t, srv)
	putAt(t, c, name, "a")
	_, shards := shardsOf(t, sc, arn)
	it, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shards[0].ShardId, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	noErr(t, err, "GetShardIterator")
	clock.Advance(14 * time.Minute)
	out, err := sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	noErr(t, err, "GetRecords within 15 minutes")
	clock.Advance(10 * time.Minute)
	_, err = sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: out.NextShardIterator})
	noErr(t, err, "a NextShardIterator 10 minutes old (valid 15 minutes from its own issue)")
	_, err = sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	var exp *st.ExpiredIteratorException
	if !errors.As(err, &exp) {
		t.Fatalf("iterator used 24 minutes after issue: want ExpiredIteratorException, got %v", err)
	}
}

func TestConformance_StreamsLocal_TrimmedDataAccess(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now()}
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Now: clock.Now,
		Streams: ddblocal.StreamOptions{Shards: 1, Retention: time.Minute, ShardMaxAge: 1000 * time.Hour}})
	c, sc, name, arn := ownStreamTable(t, srv)
	putAt(t, c, name, "old")
	_, shards := shardsOf(t, sc, arn)
	shard := shards[0].ShardId
	it, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shard, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	noErr(t, err, "GetShardIterator")
	first, _ := readShard(t, sc, it.ShardIterator, 0)
	if len(first) != 1 {
		t.Fatalf("want 1 record before trimming, got %d", len(first))
	}
	oldSeq := first[0].Dynamodb.SequenceNumber
	atOld, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shard,
		ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber, SequenceNumber: oldSeq})
	noErr(t, err, "GetShardIterator AT_SEQUENCE_NUMBER before the trim")
	clock.Advance(2 * time.Minute)
	putAt(t, c, name, "new")
	var trimmed *st.TrimmedDataAccessException
	_, err = sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shard,
		ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber, SequenceNumber: oldSeq})
	if !errors.As(err, &trimmed) {
		t.Fatalf("AT_SEQUENCE_NUMBER of a trimmed record: want TrimmedDataAccessException, got %v", err)
	}
	// AWS: an iterator obtained before its record was trimmed, used after, is a TrimmedDataAccessException.
	_, err = sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: atOld.ShardIterator})
	if !errors.As(err, &trimmed) {
		t.Fatalf("AT_SEQUENCE_NUMBER iterator issued before the trim: want TrimmedDataAccessException, got %v", err)
	}
	it, err = sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shard, ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	noErr(t, err, "GetShardIterator TRIM_HORIZON after trimming")
	rest, _ := readShard(t, sc, it.ShardIterator, 0)
	if got := fmt.Sprint(recordSummary(rest)); got != "[INSERT S:new]" {
		t.Fatalf("TRIM_HORIZON after trimming = %s, want only the record within retention", got)
	}
}
