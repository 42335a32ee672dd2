package ddblocal

import (
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"
)

// kclient returns a Kinesis SDK client for the server that retries no
// error the server answers: only a read on a connection the client's own
// transport closed (net.ErrClosed, aws/aws-sdk-go-v2#2737), as client does.
func kclient(s *Server) *kinesis.Client {
	return kinesis.New(kinesis.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.RateLimiter = ratelimit.None
			so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
				if errors.Is(err, net.ErrClosed) {
					return aws.TrueTernary
				}
				return aws.FalseTernary
			})}
		}),
	})
}

// mkStream creates a provisioned stream of n shards.
func mkStream(t *testing.T, kc *kinesis.Client, name string, n int32) string {
	t.Helper()
	if _, err := kc.CreateStream(ctxT(t), &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(n)}); err != nil {
		t.Fatalf("CreateStream %s: %v", name, err)
	}
	d, err := kc.DescribeStreamSummary(ctxT(t), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeStreamSummary %s: %v", name, err)
	}
	return aws.ToString(d.StreamDescriptionSummary.StreamARN)
}

// apiErr returns the error code and message of an API error, failing the
// test when err is not one.
func apiErr(t *testing.T, err error) (string, string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae.ErrorCode(), ae.ErrorMessage()
}

// allShards lists every shard of a stream through ListShards, page by page.
func allShards(t *testing.T, kc *kinesis.Client, name string, filter *ktypes.ShardFilter) []ktypes.Shard {
	t.Helper()
	var out []ktypes.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(name), ShardFilter: filter, MaxResults: aws.Int32(2)}
	for {
		ls, err := kc.ListShards(ctxT(t), in)
		if err != nil {
			t.Fatalf("ListShards %s: %v", name, err)
		}
		out = append(out, ls.Shards...)
		if ls.NextToken == nil {
			return out
		}
		in = &kinesis.ListShardsInput{NextToken: ls.NextToken}
	}
}

func shardIDs(shards []ktypes.Shard) []string {
	var ids []string
	for _, sh := range shards {
		ids = append(ids, aws.ToString(sh.ShardId))
	}
	return ids
}

// readShard reads a shard from TRIM_HORIZON until GetRecords ends it (a
// closed shard: NextShardIterator null) or returns nothing (an open one).
// It returns the records and the last response.
func readShard(t *testing.T, kc *kinesis.Client, stream, shard string) ([]ktypes.Record, *kinesis.GetRecordsOutput) {
	t.Helper()
	gi, err := kc.GetShardIterator(ctxT(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(stream), ShardId: aws.String(shard),
		ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("GetShardIterator %s: %v", shard, err)
	}
	var out []ktypes.Record
	for it := gi.ShardIterator; ; {
		gr, err := kc.GetRecords(ctxT(t), &kinesis.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(3)})
		if err != nil {
			t.Fatalf("GetRecords %s: %v", shard, err)
		}
		out = append(out, gr.Records...)
		if gr.NextShardIterator == nil || len(gr.Records) == 0 {
			return out, gr
		}
		it = gr.NextShardIterator
	}
}

// seqLess compares two sequence numbers as numbers.
func seqLess(a, b string) bool {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x.Cmp(y) < 0
}

// ddbChange is DynamoDB's change record as its Kinesis destination writes it.
type ddbChange struct {
	AwsRegion    string          `json:"awsRegion"`
	EventID      string          `json:"eventID"`
	EventName    string          `json:"eventName"`
	UserIdentity json.RawMessage `json:"userIdentity"`
	RecordFormat string          `json:"recordFormat"`
	TableName    string          `json:"tableName"`
	EventSource  string          `json:"eventSource"`
	Dynamodb     struct {
		ApproximateCreationDateTime int64
		Keys, NewImage, OldImage    map[string]map[string]any
		SizeBytes                   int
	} `json:"dynamodb"`
}

// streamRecords reads every record of every shard of a stream, parents
// first, and decodes each as a DynamoDB change record.
func streamRecords(t *testing.T, kc *kinesis.Client, stream string) ([]ktypes.Record, []ddbChange) {
	t.Helper()
	var recs []ktypes.Record
	for _, sh := range allShards(t, kc, stream, nil) {
		rs, _ := readShard(t, kc, stream, aws.ToString(sh.ShardId))
		recs = append(recs, rs...)
	}
	return decodeChanges(t, recs)
}

// decodeChanges decodes records as DynamoDB change records.
func decodeChanges(t *testing.T, recs []ktypes.Record) ([]ktypes.Record, []ddbChange) {
	t.Helper()
	changes := make([]ddbChange, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Data, &changes[i]); err != nil {
			t.Fatalf("record %s: data is not a DynamoDB change record: %v\n%s", aws.ToString(r.SequenceNumber), err, r.Data)
		}
	}
	return recs, changes
}

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func sortedCopy(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}
