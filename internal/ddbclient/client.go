// Package ddbclient builds the aws-sdk-go-v2 DynamoDB client the host, its
// commands and its tests use: an endpoint URL, a region, and dummy
// credentials for a loopback endpoint (never a credential chain there).
package ddbclient

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// EndpointEnv is the environment variable naming the DynamoDB endpoint when
// NewClient is given none (the SDK's service-specific endpoint variable).
const EndpointEnv = "AWS_ENDPOINT_URL_DYNAMODB"

// DefaultLocalRegion is the region used for a loopback endpoint when none is given.
const DefaultLocalRegion = "us-east-1"

// NewClient returns a DynamoDB client for endpoint (a URL such as
// "http://127.0.0.1:8000"). An empty endpoint falls back to
// AWS_ENDPOINT_URL_DYNAMODB, then to the SDK's default resolution. A loopback
// endpoint (localhost, 127.0.0.0/8, ::1) gets static dummy credentials, so no
// credential chain, profile or instance metadata is consulted; any other
// endpoint uses the standard configuration chain. An empty region means the
// chain's region (us-east-1 for a loopback endpoint).
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
	opts := []func(*dynamodb.Options){}
	if endpoint != "" {
		opts = append(opts, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
	}
	opts = append(opts, optFns...)
	return dynamodb.NewFromConfig(cfg, opts...), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
