package quarantine_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/quarantine"
)

// fakeSQS is a loopback server speaking SQS's AWS JSON protocol: it records
// each request and answers SendMessage (status 200, or status when set).
type fakeSQS struct {
	*httptest.Server
	mu     sync.Mutex
	target []string
	bodies []map[string]any
	status int
}

func newFakeSQS(t *testing.T) *fakeSQS {
	f := &fakeSQS{status: 200}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		f.mu.Lock()
		f.target = append(f.target, r.Header.Get("X-Amz-Target"))
		f.bodies = append(f.bodies, body)
		status := f.status
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if status != 200 {
			w.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
			return
		}
		sum := md5.Sum([]byte(body["MessageBody"].(string)))
		_, _ = io.WriteString(w, `{"MessageId":"m-1","MD5OfMessageBody":"`+hex.EncodeToString(sum[:])+`"}`)
	}))
	t.Cleanup(f.Close)
	return f
}

func sqsClient(url string) *sqs.Client {
	return sqs.New(sqs.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("dynafold", "dynafold", ""),
		BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}})
}

// The SQS destination sends the entry as JSON (the record in its wire
// shape) with routing attributes; a FIFO queue groups by shard and
// deduplicates by entry id; an error answer is returned, naming the queue.
func TestC4_QuarantineSQSSendsTheEntry(t *testing.T) {
	ctx := context.Background()
	srv := newFakeSQS(t)
	rec := host.Record{EventName: "INSERT", EventID: "e-1", DynamoDB: host.StreamRecord{SequenceNumber: "100",
		NewImage: abi.Item{"pk": abi.S("a"), "n": abi.N("3")}}}
	e := quarantine.Entry{Projection: "ledger", Stream: "Acct", Shard: "shardId-9", Record: rec, Reason: "boom",
		FirstSeen: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC), Attempts: 2}
	queue := "https://sqs.us-east-1.amazonaws.com/123456789012/quarantine"
	q, err := quarantine.NewSQS(sqsClient(srv.URL), queue)
	require.NoError(t, err)
	require.NoError(t, q.Send(ctx, e))
	require.Len(t, srv.bodies, 1)
	assert.Equal(t, "AmazonSQS.SendMessage", srv.target[0])
	b := srv.bodies[0]
	assert.Equal(t, queue, b["QueueUrl"])
	var got quarantine.Entry
	require.NoError(t, json.Unmarshal([]byte(b["MessageBody"].(string)), &got))
	e.ID = quarantine.EntryID(e)
	assert.Equal(t, e, got, "the body is the entry, the record included")
	assert.Contains(t, b["MessageBody"], `"NewImage":{"n":{"N":"3"},"pk":{"S":"a"}}`, "images in DynamoDB JSON")
	assert.Equal(t, map[string]any{
		"projection": map[string]any{"DataType": "String", "StringValue": "ledger"},
		"stream":     map[string]any{"DataType": "String", "StringValue": "Acct"},
		"shard":      map[string]any{"DataType": "String", "StringValue": "shardId-9"},
		"attempts":   map[string]any{"DataType": "Number", "StringValue": "2"},
	}, b["MessageAttributes"])
	assert.NotContains(t, b, "MessageGroupId")

	fifo, err := quarantine.NewSQS(sqsClient(srv.URL), queue+".fifo")
	require.NoError(t, err)
	require.NoError(t, fifo.Send(ctx, e))
	assert.Equal(t, "shardId-9", srv.bodies[1]["MessageGroupId"])
	assert.Equal(t, e.ID, srv.bodies[1]["MessageDeduplicationId"])

	srv.mu.Lock()
	srv.status = 400
	srv.mu.Unlock()
	err = q.Send(ctx, e)
	require.Error(t, err)
	assert.Contains(t, err.Error(), queue)
	_, err = quarantine.NewSQS(nil, queue)
	assert.Error(t, err)
	_, err = quarantine.NewSQS(sqsClient(srv.URL), "")
	assert.ErrorContains(t, err, "queue URL")
}
