package streams

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newRegistry(t testing.TB, opts Options) *Registry {
	t.Helper()
	r, err := NewRegistry(opts)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// serve exposes a Registry over HTTP the way the ddblocal server does, so
// the real aws-sdk-go-v2 client can talk to it.
func serve(t testing.TB, r *Registry) *dynamodbstreams.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		out, err := r.Handle(req.Context(), req.Header.Get("X-Amz-Target"), body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if err != nil {
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				ae = apierr.New("InternalServerError", 500, "%v", err)
			}
			w.WriteHeader(ae.Status)
			_ = json.NewEncoder(w).Encode(map[string]string{
				"__type":  "com.amazonaws.dynamodb.v20120810#" + ae.Code,
				"message": ae.Message,
			})
			return
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		// The SDK's default retries stay on: it retries net.ErrClosed, which
		// net/http can produce when it reaps an idle loopback connection.
	})
}

// call runs one operation directly and decodes its response into out.
func call(t testing.TB, r *Registry, op string, in any, out any) error {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Handle(context.Background(), op, b)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(resp, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", op, resp, err)
		}
	}
	return nil
}

func errCode(err error) string {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

func key(id string) abi.Item { return abi.Item{"pk": abi.S(id)} }

func item(id string, v int) abi.Item {
	return abi.Item{"pk": abi.S(id), "v": abi.N(itoa(v))}
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }

func insert(id string, v int) Change {
	return Change{EventName: EventInsert, Keys: key(id), NewImage: item(id, v)}
}

func modify(id string, old, v int) Change {
	return Change{EventName: EventModify, Keys: key(id), OldImage: item(id, old), NewImage: item(id, v)}
}

func remove(id string, old int) Change {
	return Change{EventName: EventRemove, Keys: key(id), OldImage: item(id, old)}
}

// shards returns every shard of a stream through DescribeStream pages.
func shards(t testing.TB, c *dynamodbstreams.Client, arn string) []types.Shard {
	t.Helper()
	var out []types.Shard
	var start *string
	for {
		d, err := c.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: &arn, ExclusiveStartShardId: start})
		if err != nil {
			t.Fatalf("DescribeStream: %v", err)
		}
		out = append(out, d.StreamDescription.Shards...)
		if d.StreamDescription.LastEvaluatedShardId == nil {
			return out
		}
		start = d.StreamDescription.LastEvaluatedShardId
	}
}

// readShard reads a shard from an iterator type to its end (closed shard)
// or until a page comes back empty (open shard); it returns the records
// and the last NextShardIterator.
func readShard(t testing.TB, c *dynamodbstreams.Client, arn, shardID string, typ types.ShardIteratorType) ([]types.Record, *string) {
	t.Helper()
	ctx := context.Background()
	it, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: &shardID, ShardIteratorType: typ})
	if err != nil {
		t.Fatalf("GetShardIterator: %v", err)
	}
	return drain(t, c, it.ShardIterator)
}

func drain(t testing.TB, c *dynamodbstreams.Client, iter *string) ([]types.Record, *string) {
	t.Helper()
	var recs []types.Record
	for iter != nil {
		out, err := c.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			t.Fatalf("GetRecords: %v", err)
		}
		recs = append(recs, out.Records...)
		if len(out.Records) == 0 && out.NextShardIterator != nil {
			return recs, out.NextShardIterator
		}
		iter = out.NextShardIterator
	}
	return recs, nil
}

// readAll reads every shard of a stream, parents before children, as a
// lineage-aware reader does.
func readAll(t testing.TB, c *dynamodbstreams.Client, arn string) []types.Record {
	t.Helper()
	all := shards(t, c, arn)
	done := map[string]bool{}
	var recs []types.Record
	for len(done) < len(all) {
		progressed := false
		for _, sh := range all {
			id := *sh.ShardId
			if done[id] {
				continue
			}
			if p := sh.ParentShardId; p != nil && !done[*p] && known(all, *p) {
				continue
			}
			r, _ := readShard(t, c, arn, id, types.ShardIteratorTypeTrimHorizon)
			recs = append(recs, r...)
			done[id] = true
			progressed = true
		}
		if !progressed {
			t.Fatal("shard lineage has a cycle")
		}
	}
	return recs
}

func known(all []types.Shard, id string) bool {
	for _, sh := range all {
		if *sh.ShardId == id {
			return true
		}
	}
	return false
}
