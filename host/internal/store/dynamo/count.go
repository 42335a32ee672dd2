package dynamo

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/dynafold/dynafold/internal/ddbclient"
)

// Counter counts the HTTP requests a DynamoDB client sends, per operation
// name. It sits in the deserialize step, inside the SDK's retry loop, so every
// attempt that reaches the transport is counted, retries included.
type Counter struct {
	mu        sync.Mutex
	counts    map[string]int64
	throttled map[string]int64 // attempts DynamoDB refused for its rate
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter {
	return &Counter{counts: map[string]int64{}, throttled: map[string]int64{}}
}

// Counts returns a copy of the counts so far, keyed by operation name
// ("GetItem", "BatchGetItem", "TransactWriteItems", "Query", ...).
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Throttled returns a copy of the counts of attempts DynamoDB refused for
// its rate (throttling), keyed by operation name: the retryer retries
// them, so a request that succeeded in the end may have been throttled.
func (c *Counter) Throttled() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.throttled)
}

// Reset sets every count back to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.counts = map[string]int64{}
	c.throttled = map[string]int64{}
	c.mu.Unlock()
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

// attempted counts an attempt's error: a throttle.
func (c *Counter) attempted(op string, err error) {
	if err == nil || !ddbclient.IsThrottle(err) {
		return
	}
	c.mu.Lock()
	c.throttled[op]++
	c.mu.Unlock()
}

// ID implements middleware.DeserializeMiddleware.
func (c *Counter) ID() string { return "dynafold.RequestCounter" }

// HandleDeserialize implements middleware.DeserializeMiddleware: it counts
// the request about to be sent, passes it on, and counts its answer when
// DynamoDB throttled it.
func (c *Counter) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	op := awsmiddleware.GetOperationName(ctx)
	c.add(op)
	out, md, err := next.HandleDeserialize(ctx, in)
	c.attempted(op, err)
	return out, md, err
}

// ClientOption returns a dynamodb option that installs the counter on a
// client's stack, for dynamodb.New / dynamodb.NewFromConfig or per call.
func (c *Counter) ClientOption() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Deserialize.Add(c, middleware.Before)
		})
	}
}
