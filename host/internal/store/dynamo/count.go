package dynamo

import (
	"context"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts the HTTP requests a DynamoDB client sends, per operation
// name. It sits in the deserialize step, inside the SDK's retry loop, so every
// attempt that reaches the transport is counted, retries included.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int64
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{counts: map[string]int64{}} }

// Counts returns a copy of the counts so far, keyed by operation name
// ("GetItem", "BatchGetItem", "TransactWriteItems", "Query", ...).
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Reset sets every count back to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.counts = map[string]int64{}
	c.mu.Unlock()
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

// ID implements middleware.DeserializeMiddleware.
func (c *Counter) ID() string { return "dynafold.RequestCounter" }

// HandleDeserialize implements middleware.DeserializeMiddleware: it counts
// the request about to be sent and passes it on.
func (c *Counter) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	c.add(awsmiddleware.GetOperationName(ctx))
	return next.HandleDeserialize(ctx, in)
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
