// Package ddbclient builds the aws-sdk-go-v2 DynamoDB client the host, its
// commands and its tests use: an endpoint URL, a region, and dummy
// credentials for a loopback endpoint (never a credential chain there).
package ddbclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// EndpointEnv is the environment variable naming the DynamoDB endpoint when
// NewClient is given none (the SDK's service-specific endpoint variable).
const EndpointEnv = "AWS_ENDPOINT_URL_DYNAMODB"

// DefaultLocalRegion is the region used for a loopback endpoint when none is given.
const DefaultLocalRegion = "us-east-1"

// DefaultIdleConns is the number of idle connections to a DynamoDB
// endpoint NewClient's client keeps open (WithIdleConns changes it).
const DefaultIdleConns = 100

// HTTPClient returns the HTTP client NewClient gives the SDK: the SDK's own
// (its timeouts, TLS settings and dialer), keeping up to idle connections
// per host open between requests, where the SDK keeps 10. A client that
// sends more requests at once than it keeps connections opens a new one
// (and, to AWS, completes a TLS handshake: more round trips) for every
// request above that, batch after batch; connections kept open serve the
// next batch, and the next Lambda invocation, at once.
func HTTPClient(idle int) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = idle
		t.MaxIdleConnsPerHost = idle
	})
}

// WithIdleConns makes a client keep up to n idle connections per host
// (HTTPClient); n below DefaultIdleConns keeps DefaultIdleConns.
func WithIdleConns(n int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) { o.HTTPClient = HTTPClient(max(n, DefaultIdleConns)) }
}

// NewClient returns a DynamoDB client for endpoint (a URL such as
// "http://127.0.0.1:8000"). An empty endpoint falls back to
// AWS_ENDPOINT_URL_DYNAMODB, then to the SDK's default resolution. A loopback
// endpoint (localhost, 127.0.0.0/8, ::1) gets static dummy credentials, so no
// credential chain, profile or instance metadata is consulted; any other
// endpoint uses the standard configuration chain. An empty region means the
// chain's region (us-east-1 for a loopback endpoint). The client keeps
// DefaultIdleConns connections open (HTTPClient) and does not lose one to
// a race at the end of a request (KeepConnections). Given no option that
// adds middleware, the client is Plain (see Wire).
func NewClient(ctx context.Context, endpoint, region string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	if endpoint == "" {
		endpoint = os.Getenv(EndpointEnv)
	}
	var loads []func(*config.LoadOptions) error
	loopback := false
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("dynamo endpoint %q: want a URL like http://127.0.0.1:8000", endpoint)
		}
		loopback = isLoopback(u.Hostname())
	}
	if loopback {
		if region == "" {
			region = DefaultLocalRegion
		}
		loads = append(loads, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")))
	}
	if region != "" {
		loads = append(loads, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: load AWS config: %w", err)
	}
	opts := []func(*dynamodb.Options){WithIdleConns(DefaultIdleConns), KeepConnections}
	if endpoint != "" {
		opts = append(opts, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
	}
	opts = append(opts, optFns...)
	c := dynamodb.NewFromConfig(cfg, opts...)
	if len(c.Options().APIOptions) == 1 { // KeepConnections only: no caller's middleware
		markPlain(c)
	}
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
