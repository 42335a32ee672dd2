package kfeed_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/kinesisclient"
	"github.com/dynafold/dynafold/internal/testenv"
)

// changeData is a DynamoDB change record as a table's Kinesis streaming
// destination writes it: an INSERT of item id with n.
func changeData(id string, n int) []byte {
	return fmt.Appendf(nil, `{"awsRegion":"us-east-1","eventID":"e-%s-%d","eventName":"INSERT","userIdentity":null,"recordFormat":"application/json","tableName":"events","eventSource":"aws:dynamodb",`+
		`"dynamodb":{"ApproximateCreationDateTime":1764720000000,"Keys":{"pk":{"S":"%s"}},"NewImage":{"pk":{"S":"%s"},"n":{"N":"%d"}},"SizeBytes":20}}`, id, n, id, id, n)
}

// calls notes the time of every GetRecords request on the wire.
type calls struct {
	mu    sync.Mutex
	times []time.Time
}

// counter counts ListShards requests on the wire.
type counter struct{ n atomic.Int64 }

func (c *counter) Load() int64 { return c.n.Load() }

func (c *calls) get() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.times...)
}

type callTransport struct {
	next  http.RoundTripper
	c     *calls
	lists *counter
}

func (ct *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("X-Amz-Target") == "Kinesis_20131202.GetRecords" {
		ct.c.mu.Lock()
		ct.c.times = append(ct.c.times, time.Now())
		ct.c.mu.Unlock()
	}
	if req.Header.Get("X-Amz-Target") == "Kinesis_20131202.ListShards" {
		ct.lists.n.Add(1)
	}
	return ct.next.RoundTrip(req)
}

// kenv is ddblocal with a Kinesis stream "k" of one shard, a clock the
// test jumps, and a client whose GetRecords calls are noted.
type kenv struct {
	srv   *ddblocal.Server
	kc    *kinesis.Client
	clock *testenv.Clock
	calls *calls
	lists *counter
}

func startK(t *testing.T, opts ...func(*ddblocal.Options)) *kenv {
	t.Helper()
	clock := &testenv.Clock{}
	e := testenv.Start(t, append([]func(*ddblocal.Options){func(o *ddblocal.Options) { o.Now = clock.Now }}, opts...)...)
	c, lists := &calls{}, &counter{}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	kc, err := kinesisclient.NewClient(context.Background(), e.Server.Endpoint(), "", func(o *kinesis.Options) {
		o.HTTPClient = &http.Client{Transport: &callTransport{next: tr, c: c, lists: lists}}
		o.RetryMaxAttempts = 1 // the reader's own retries are under test
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kc.CreateStream(context.Background(), &kinesis.CreateStreamInput{StreamName: aws.String("k"), ShardCount: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	return &kenv{srv: e.Server, kc: kc, clock: clock, calls: c, lists: lists}
}

// put writes n change records of item id, numbered from+1 on, and
// returns their sequence numbers.
func put(t *testing.T, kc *kinesis.Client, stream, id string, from, n int) []string {
	t.Helper()
	var seqs []string
	for i := from + 1; i <= from+n; i++ {
		out, err := kc.PutRecord(context.Background(), &kinesis.PutRecordInput{StreamName: aws.String(stream), PartitionKey: aws.String(id), Data: changeData(id, i)})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	return seqs
}

// waitActive waits until a stream is ACTIVE (after a split on a server
// that updates streams in the background).
func waitActive(t *testing.T, kc *kinesis.Client, stream string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := kc.DescribeStreamSummary(context.Background(), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(stream)})
		if err != nil {
			t.Fatal(err)
		}
		if out.StreamDescriptionSummary.StreamStatus == ktypes.StreamStatusActive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s not ACTIVE after 30 s", stream)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
