package deliver

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
)

// awsCall is one AWS JSON protocol request a fake service received.
type awsCall struct {
	target, contentType, auth string
	body                      map[string]any
}

// fakeAWS is an httptest.Server on 127.0.0.1 speaking an AWS JSON protocol:
// it records each call and answers with answer(call) (status, JSON body, and
// headers to set).
type fakeAWS struct {
	*httptest.Server
	mu    sync.Mutex
	calls []awsCall
}

func newFakeAWS(t *testing.T, answer func(c awsCall) (int, string, map[string]string)) *fakeAWS {
	f := &fakeAWS{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := awsCall{target: r.Header.Get("X-Amz-Target"), contentType: r.Header.Get("Content-Type"), auth: r.Header.Get("Authorization")}
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Errorf("request body is not JSON: %v: %q", err, raw)
		}
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		status, body, headers := answer(c)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", c.contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAWS) got() []awsCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]awsCall(nil), f.calls...)
}

// Static dummy credentials and a region; no retries, so an error answer
// comes back at once.
var (
	testCreds  = credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")
	testRegion = "us-east-1"
)

func sqsClient(url string) *sqs.Client {
	return sqs.New(sqs.Options{Region: testRegion, Credentials: testCreds, BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}})
}

func eventBridgeClient(url string) *eventbridge.Client {
	return eventbridge.New(eventbridge.Options{Region: testRegion, Credentials: testCreds, BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{}})
}

// sendMessageOK answers SendMessage as SQS does, with the body's MD5 the
// client checks.
func sendMessageOK(c awsCall) (int, string, map[string]string) {
	sum := md5.Sum([]byte(c.body["MessageBody"].(string)))
	return 200, `{"MessageId":"5fea7756-0ea4-451a-a703-a558b933e274","MD5OfMessageBody":"` + hex.EncodeToString(sum[:]) + `"}`, nil
}

func TestO2_SQSSendsTheEffect(t *testing.T) {
	srv := newFakeAWS(t, sendMessageOK)
	queue := "https://sqs.us-east-1.amazonaws.com/123456789012/effects"
	q, err := NewSQS(sqsClient(srv.URL), queue, SQSOptions{})
	require.NoError(t, err)
	e := sample()
	require.NoError(t, q.Deliver(context.Background(), e))

	calls := srv.got()
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Equal(t, "AmazonSQS.SendMessage", c.target, "SQS speaks AWS JSON 1.0")
	assert.Equal(t, "application/x-amz-json-1.0", c.contentType)
	assert.Contains(t, c.auth, "AWS4-HMAC-SHA256 Credential=dynafold/", "signed with the client's credentials")
	assert.Contains(t, c.auth, "/us-east-1/sqs/aws4_request")
	assert.Equal(t, queue, c.body["QueueUrl"])
	want, err := e.JSON(Plain)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), c.body["MessageBody"].(string))
	assert.Equal(t, map[string]any{
		"stream":         map[string]any{"DataType": "String", "StringValue": "Order"},
		"streamId":       map[string]any{"DataType": "String", "StringValue": "o-1"},
		"projection":     map[string]any{"DataType": "String", "StringValue": "shipments"},
		"version":        map[string]any{"DataType": "Number", "StringValue": "3"},
		"index":          map[string]any{"DataType": "Number", "StringValue": "0"},
		"idempotencyKey": map[string]any{"DataType": "String", "StringValue": e.IdempotencyKey()},
	}, c.body["MessageAttributes"])
	assert.NotContains(t, c.body, "MessageGroupId", "a standard queue has no groups")
	assert.NotContains(t, c.body, "MessageDeduplicationId")
}

func TestO2_SQSFIFOGroupsByRowAndDeduplicatesByKey(t *testing.T) {
	srv := newFakeAWS(t, sendMessageOK)
	q, err := NewSQS(sqsClient(srv.URL), "https://sqs.us-east-1.amazonaws.com/123456789012/effects.fifo", SQSOptions{})
	require.NoError(t, err)

	e := sample()
	again := sample()
	other := sample()
	other.Index = 1
	noKey := sample()
	noKey.Key = nil
	odd := sample()
	odd.Key = abi.Item{"pk": abi.S("Straße 1")} // not printable ASCII: hashed
	for _, x := range []Effect{e, again, other, noKey, odd} {
		require.NoError(t, q.Deliver(context.Background(), x))
	}
	calls := srv.got()
	require.Len(t, calls, 5)
	group := func(i int) any { return calls[i].body["MessageGroupId"] }
	dedup := func(i int) any { return calls[i].body["MessageDeduplicationId"] }
	assert.Equal(t, "pk=SHIP#s-1", group(0))
	assert.Equal(t, e.IdempotencyKey(), dedup(0))
	assert.Equal(t, dedup(0), dedup(1), "a redelivery has the same deduplication id")
	assert.Equal(t, group(0), group(2), "one row, one group")
	assert.NotEqual(t, dedup(0), dedup(2), "another effect of the row is not deduplicated")
	assert.Equal(t, "Order#o-1", group(3), "no row key: grouped by stream instance")
	assert.Regexp(t, `^row-[0-9a-f]{64}$`, group(4))
}

func TestO2_SQSErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		headers   map[string]string
		permanent bool
		code      string
	}{
		{"missing queue", 400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`,
			map[string]string{"X-Amzn-Query-Error": "AWS.SimpleQueueService.NonExistentQueue;Sender"}, true, "NonExistentQueue"},
		{"throttled", 400, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"Rate exceeded"}`,
			map[string]string{"X-Amzn-Query-Error": "RequestThrottled;Sender"}, false, "RequestThrottled"},
		{"internal error", 500, `{"__type":"com.amazonaws.sqs#InternalError","message":"We encountered an internal error."}`,
			nil, false, "InternalError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeAWS(t, func(awsCall) (int, string, map[string]string) { return tt.status, tt.body, tt.headers })
			queue := "https://sqs.us-east-1.amazonaws.com/123456789012/effects"
			q, err := NewSQS(sqsClient(srv.URL), queue, SQSOptions{})
			require.NoError(t, err)
			err = q.Deliver(context.Background(), sample())
			require.Error(t, err)
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.status, de.Status)
			assert.Contains(t, de.Code, tt.code)
			assert.Equal(t, tt.permanent, errors.Is(err, ErrPermanent), err.Error())
			assert.Contains(t, err.Error(), "to sqs "+queue)
			t.Log(err)
		})
	}
}

func TestO2_EventBridgePutsTheEffect(t *testing.T) {
	srv := newFakeAWS(t, func(awsCall) (int, string, map[string]string) {
		return 200, `{"FailedEntryCount":0,"Entries":[{"EventId":"11710aed-b79e-4468-a20b-bb3c0c3b4860"}]}`, nil
	})
	client := eventBridgeClient(srv.URL)

	bus, err := NewEventBridge(client, EventBridgeOptions{EventBus: "shipping", Source: "acme.shipments"})
	require.NoError(t, err)
	e := sample()
	require.NoError(t, bus.Deliver(context.Background(), e))

	def, err := NewEventBridge(client, EventBridgeOptions{DetailType: "Notice", Encoding: DynamoDBJSON})
	require.NoError(t, err)
	require.NoError(t, def.Deliver(context.Background(), e))
	untagged := sample()
	untagged.Value = abi.M(abi.Item{"kind": abi.S("x")})
	require.NoError(t, defaultBus(t, client).Deliver(context.Background(), untagged))

	calls := srv.got()
	require.Len(t, calls, 3)
	c := calls[0]
	assert.Equal(t, "AWSEvents.PutEvents", c.target, "EventBridge speaks AWS JSON 1.1")
	assert.Equal(t, "application/x-amz-json-1.1", c.contentType)
	assert.Contains(t, c.auth, "/us-east-1/events/aws4_request")
	want, err := e.JSON(Plain)
	require.NoError(t, err)
	entries := c.body["Entries"].([]any)
	require.Len(t, entries, 1)
	entry := entries[0].(map[string]any)
	assert.Equal(t, "shipping", entry["EventBusName"])
	assert.Equal(t, "acme.shipments", entry["Source"])
	assert.Equal(t, "ShipmentNotice", entry["DetailType"], "the effect's _tag")
	assert.JSONEq(t, string(want), entry["Detail"].(string))

	entry = calls[1].body["Entries"].([]any)[0].(map[string]any)
	assert.NotContains(t, entry, "EventBusName", "the default bus")
	assert.Equal(t, DefaultSource, entry["Source"])
	assert.Equal(t, "Notice", entry["DetailType"], "configured")
	typed, err := e.JSON(DynamoDBJSON)
	require.NoError(t, err)
	assert.JSONEq(t, string(typed), entry["Detail"].(string))

	entry = calls[2].body["Entries"].([]any)[0].(map[string]any)
	assert.Equal(t, DefaultDetailType, entry["DetailType"], "no _tag")
}

func defaultBus(t *testing.T, client EventBridgeAPI) *EventBridge {
	t.Helper()
	b, err := NewEventBridge(client, EventBridgeOptions{})
	require.NoError(t, err)
	return b
}

func TestO2_EventBridgeErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		permanent bool
		code      string
		message   string
	}{
		{"failed entry, malformed", 200, `{"FailedEntryCount":1,"Entries":[{"ErrorCode":"MalformedDetail","ErrorMessage":"Detail is malformed."}]}`,
			true, "MalformedDetail", "Detail is malformed."},
		{"failed entry, throttled", 200, `{"FailedEntryCount":1,"Entries":[{"ErrorCode":"ThrottlingException","ErrorMessage":"Rate exceeded."}]}`,
			false, "ThrottlingException", "Rate exceeded."},
		{"failed entry, internal", 200, `{"FailedEntryCount":1,"Entries":[{"ErrorCode":"InternalFailure","ErrorMessage":"Try again."}]}`,
			false, "InternalFailure", "Try again."},
		{"missing bus", 400, `{"__type":"ResourceNotFoundException","message":"Event bus shipping does not exist."}`,
			true, "ResourceNotFoundException", "does not exist"},
		{"service error", 500, `{"__type":"InternalException","message":"oops"}`,
			false, "InternalException", "oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeAWS(t, func(awsCall) (int, string, map[string]string) { return tt.status, tt.body, nil })
			bus, err := NewEventBridge(eventBridgeClient(srv.URL), EventBridgeOptions{EventBus: "shipping"})
			require.NoError(t, err)
			err = bus.Deliver(context.Background(), sample())
			require.Error(t, err)
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.code, de.Code)
			assert.Equal(t, tt.permanent, errors.Is(err, ErrPermanent), err.Error())
			assert.Contains(t, err.Error(), "to eventbridge bus shipping")
			assert.Contains(t, err.Error(), tt.message)
			t.Log(err)
		})
	}
}

func TestO2_SDKTargetsRefuseBadSetup(t *testing.T) {
	_, err := NewSQS(nil, "https://q", SQSOptions{})
	assert.Error(t, err)
	_, err = NewSQS(sqsClient("http://127.0.0.1:1"), "", SQSOptions{})
	assert.Error(t, err)
	_, err = NewEventBridge(nil, EventBridgeOptions{})
	assert.Error(t, err)
	_, err = NewEventBridge(eventBridgeClient("http://127.0.0.1:1"), EventBridgeOptions{Encoding: Encoding(5)})
	assert.Error(t, err)
}
