package feed_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/testenv"
)

// env is an in-process ddblocal with a table whose stream the tests read
// through the real DynamoDB Streams client over HTTP.
type env struct {
	*testenv.Env
	table, arn string
	api        *countingAPI
	// clock is the server's clock: a test passes a retention or an
	// iterator's lifetime by jumping it, never by sleeping.
	clock *testenv.Clock
}

func start(t *testing.T, so ddblocal.StreamOptions) *env {
	t.Helper()
	clock := &testenv.Clock{}
	e := testenv.Start(t, func(o *ddblocal.Options) { o.Streams, o.Now = so, clock.Now })
	table := e.Table(t, "feed", true)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections) // before the server closes (LIFO)
	sc := dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(e.Server.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("any", "any", ""),
		HTTPClient:   &http.Client{Transport: tr},
		// No SDK retries: throttling must reach the reader's own retry loop.
		RetryMaxAttempts: 1,
	})
	api := &countingAPI{API: sc, errs: map[string]int{}}
	arn, err := feed.LatestStream(context.Background(), api, table)
	if err != nil {
		t.Fatal(err)
	}
	return &env{Env: e, table: table, arn: arn, api: api, clock: clock}
}

// put writes item pk with attribute v; each put is one stream record.
func (e *env) put(t *testing.T, pk string, v int) {
	t.Helper()
	e.Put(t, e.table, abi.Item{"pk": abi.S(pk), "sk": abi.S("x"), "v": abi.N(strconv.Itoa(v))})
}

// reader returns a reader with fast test timings.
func (e *env) reader(batch int, opts ...func(*feed.Options)) *feed.Reader {
	o := feed.Options{BatchSize: batch, PollInterval: 5 * time.Millisecond, Backoff: backoff.Policy{Base: time.Millisecond, Max: 10 * time.Millisecond}}
	for _, f := range opts {
		f(&o)
	}
	return feed.NewReader(e.api, e.arn, o)
}

// countingAPI passes every call to the real client and counts the errors
// it returns by operation and code.
type countingAPI struct {
	feed.API
	mu   sync.Mutex
	errs map[string]int
}

func (c *countingAPI) count(op string, err error) {
	if err == nil {
		return
	}
	code := "other"
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	c.mu.Lock()
	c.errs[op+"/"+code]++
	c.mu.Unlock()
}

func (c *countingAPI) errors(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errs[key]
}

func (c *countingAPI) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	out, err := c.API.DescribeStream(ctx, in, o...)
	c.count("DescribeStream", err)
	return out, err
}

func (c *countingAPI) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	out, err := c.API.GetShardIterator(ctx, in, o...)
	c.count("GetShardIterator", err)
	return out, err
}

func (c *countingAPI) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, o ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	out, err := c.API.GetRecords(ctx, in, o...)
	c.count("GetRecords", err)
	return out, err
}

// readLog is what readAll saw.
type readLog struct {
	records []host.Record
	shardOf map[string]string // sequence number -> shard id
	shards  []feed.Shard
	// started lists shards in the order they were first read; finishedAt
	// is the index in records at which a shard was finished.
	started    []string
	finishedAt map[string]int
}

// readAll reads the whole stream as the host will: shards in lineage order
// from their checkpoints, until every closed shard is finished and the open
// ones are caught up.
func readAll(t *testing.T, ctx context.Context, r *feed.Reader) readLog {
	t.Helper()
	log := readLog{shardOf: map[string]string{}, finishedAt: map[string]int{}}
	finished := map[string]bool{}
	ckpt := map[string]string{}
	seen := map[string]bool{}
	for round := 0; ; round++ {
		if round > 100 {
			t.Fatal("readAll: no end after 100 rounds")
		}
		shards, err := r.Shards(ctx)
		if err != nil {
			t.Fatal(err)
		}
		log.shards = shards
		progressed := false
		ready := feed.Ready(shards, finished)
		for i := len(ready) - 1; i >= 0; i-- { // newest first: only Ready keeps children after parents
			sh := ready[i]
			if !seen[sh.ID] {
				seen[sh.ID] = true
				log.started = append(log.started, sh.ID)
			}
			it := r.Iterator(sh.ID, ckpt[sh.ID])
			for {
				b, err := it.Next(ctx)
				if err != nil {
					t.Fatalf("shard %s: %v", sh.ID, err)
				}
				for _, rec := range b.Records {
					log.shardOf[rec.DynamoDB.SequenceNumber] = sh.ID
				}
				log.records = append(log.records, b.Records...)
				if l := b.Last(); l != "" {
					ckpt[sh.ID] = l
				}
				if b.Finished {
					finished[sh.ID] = true
					log.finishedAt[sh.ID] = len(log.records)
					progressed = true
					break
				}
				if len(b.Records) == 0 {
					break // an open shard, caught up
				}
			}
		}
		if !progressed {
			return log
		}
	}
}

// seqLess compares sequence numbers (decimal digits) numerically.
func seqLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func seqs(recs []host.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.DynamoDB.SequenceNumber
	}
	return out
}

func label(r host.Record) string {
	return fmt.Sprintf("%s=%s", r.DynamoDB.NewImage["pk"].Str, r.DynamoDB.NewImage["v"].Str)
}
