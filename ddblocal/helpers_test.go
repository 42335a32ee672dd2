package ddblocal

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// startServer starts a ddblocal for a test and closes it when the test ends.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.TTLInterval == 0 {
		opts.TTLInterval = -1
	}
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// client returns an SDK client for the server; retries is the SDK's
// RetryMaxAttempts. With 1, no error the server answers is retried; only a
// read on a connection the client's own transport closed (net.ErrClosed, a
// client-side race of net/http and the SDK, aws/aws-sdk-go-v2#2737: about
// one 1 MB Scan page in 70 here) is, as the SDK's default retryer does.
func client(s *Server, retries int) *dynamodb.Client {
	o := dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(s.Endpoint()),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		RetryMaxAttempts: retries,
	}
	if retries == 1 {
		o.RetryMaxAttempts = 0
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.RateLimiter = ratelimit.None
			so.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
				if errors.Is(err, net.ErrClosed) {
					return aws.TrueTernary
				}
				return aws.FalseTernary
			})}
		})
	}
	return dynamodb.New(o)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mkTable creates a table keyed pk (S) [+ sk (S)].
func mkTable(t *testing.T, c *dynamodb.Client, name string, withSort bool, mod ...func(*dynamodb.CreateTableInput)) {
	t.Helper()
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}
	if withSort {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange})
	}
	for _, m := range mod {
		m(in)
	}
	if _, err := c.CreateTable(ctxT(t), in); err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// sign signs a hand-made request with AWS Signature Version 4, as the AWS
// SDKs sign theirs (ddblocal refuses an unsigned request with DynamoDB's
// MissingAuthenticationTokenException); the payload is not hashed, so a
// streamed body stays unread.
func sign(req *http.Request) *http.Request {
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "test-secret"}
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(req.Context(), creds, req, "UNSIGNED-PAYLOAD", "dynamodb", "us-east-1", time.Now()); err != nil {
		panic(err)
	}
	return req
}
