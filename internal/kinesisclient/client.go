// Package kinesisclient builds the aws-sdk-go-v2 Kinesis client the host,
// its commands and its tests use, as ddbclient builds the DynamoDB one: an
// endpoint URL, a region, and dummy credentials for a loopback endpoint
// (never a credential chain there).
package kinesisclient

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/dynafold/dynafold/internal/ddbclient"
)

// EndpointEnv is the environment variable naming the Kinesis endpoint when
// NewClient is given none (the SDK's service-specific endpoint variable).
const EndpointEnv = "AWS_ENDPOINT_URL_KINESIS"

// DefaultLocalRegion is the region used for a loopback endpoint when none
// is given.
const DefaultLocalRegion = "us-east-1"

// NewClient returns a Kinesis client for endpoint (a URL such as
// "http://127.0.0.1:8000", ddblocal serving Kinesis on its DynamoDB port).
// An empty endpoint falls back to AWS_ENDPOINT_URL_KINESIS, then to the
// SDK's default resolution. A loopback endpoint gets static dummy
// credentials; any other uses the standard configuration chain. An empty
// region means the chain's (us-east-1 for a loopback endpoint). Like
// ddbclient's, the client keeps its connections open (ddbclient.HTTPClient,
// ddbclient.KeepConnectionsMiddleware).
func NewClient(ctx context.Context, endpoint, region string, optFns ...func(*kinesis.Options)) (*kinesis.Client, error) {
	if endpoint == "" {
		endpoint = os.Getenv(EndpointEnv)
	}
	var loads []func(*config.LoadOptions) error
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("kinesis endpoint %q: want a URL like http://127.0.0.1:8000", endpoint)
		}
		if isLoopback(u.Hostname()) {
			if region == "" {
				region = DefaultLocalRegion
			}
			loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")))
		}
	}
	if region != "" {
		loads = append(loads, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("kinesis: load AWS config: %w", err)
	}
	base := func(o *kinesis.Options) {
		o.HTTPClient = ddbclient.HTTPClient(ddbclient.DefaultIdleConns)
		o.APIOptions = append(o.APIOptions, ddbclient.KeepConnectionsMiddleware)
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}
	return kinesis.NewFromConfig(cfg, append([]func(*kinesis.Options){base}, optFns...)...), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
