// Package dynamotest starts a DynamoDB-compatible server for tests and gives
// them a real aws-sdk-go-v2 client over HTTP to it: the project's own
// ddblocal in-process by default, or the server at $DYNAFOLD_TEST_DDB_ENDPOINT
// when set (dynalite, say). Nothing but loopback is ever contacted.
package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/internal/ddbclient"
)

// EndpointEnv names an external server to test against instead of ddblocal.
const EndpointEnv = "DYNAFOLD_TEST_DDB_ENDPOINT"

var tableSeq atomic.Int64

// Endpoint returns the endpoint of a server for t: $DYNAFOLD_TEST_DDB_ENDPOINT
// (loopback only) or a fresh in-process ddblocal closed when t ends.
func Endpoint(t testing.TB) string {
	t.Helper()
	if ep := os.Getenv(EndpointEnv); ep != "" {
		u, err := url.Parse(ep)
		if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
			t.Fatalf("%s=%q: only a loopback endpoint is allowed in tests", EndpointEnv, ep)
		}
		return ep
	}
	ep, closeFn, err := startLocal(context.Background())
	if err != nil {
		t.Fatalf("start ddblocal: %v", err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Errorf("close ddblocal: %v", err)
		}
	})
	return ep
}

// Client returns an SDK client for a server for t (see Endpoint).
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	return ClientAt(t, Endpoint(t))
}

// ClientAt returns an SDK client for the server at endpoint, its idle
// connections closed when t ends.
func ClientAt(t testing.TB, ep string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	// The SDK's own HTTP client, as NewClient's (so a Wire on it sends on
	// connections of its own), with its connections closed when t ends:
	// connections dialled but never used look "new" to the server, and
	// http.Server.Shutdown waits 5 s for those (cleanups run last-in
	// first-out, so this runs before the server closes).
	var mu sync.Mutex
	var conns []net.Conn
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	hc := ddbclient.HTTPClient(ddbclient.DefaultIdleConns).WithTransportOptions(func(tr *http.Transport) {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
			return c, err
		}
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	optFns = append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.HTTPClient = hc
		// The SDK's own retries stay (4 attempts for DynamoDB), with short
		// waits so tests of throttling run fast.
		o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, 20*time.Millisecond)
	}}, optFns...)
	c, err := ddbclient.NewClient(context.Background(), ep, "", optFns...)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// CreateTable creates a table with a string hash key "pk" and range key "sk"
// and a NEW_IMAGE stream, under a name unique to the test run, and returns
// the name. The table is deleted when t ends.
func CreateTable(t testing.TB, c *dynamodb.Client, prefix string) string {
	t.Helper()
	return CreateTableWith(t, c, prefix, types.StreamViewTypeNewImage)
}

// CreateTableWith is CreateTable with the stream's view type; "" creates
// the table without a stream.
func CreateTableWith(t testing.TB, c *dynamodb.Client, prefix string, view types.StreamViewType) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1_000_000_000, tableSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode:         types.BillingModePayPerRequest,
		StreamSpecification: streamSpec(view),
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 20*time.Second); err != nil {
		t.Fatalf("wait for table %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

func streamSpec(view types.StreamViewType) *types.StreamSpecification {
	if view == "" {
		return nil
	}
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view}
}

// SkipIfUnsupported skips t when err says the server does not implement the
// operation (UnknownOperationException: dynalite has no transactions, say).
// ddblocal implements every operation the project uses, so under it this
// never skips.
func SkipIfUnsupported(t testing.TB, err error) {
	t.Helper()
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "UnknownOperationException" {
		t.Skipf("the server at this endpoint does not implement the operation: %v", err)
	}
}
