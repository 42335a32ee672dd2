package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/kinesisclient"
)

// KinesisConfig names the Kinesis data stream the event table streams its
// changes to (DynamoDB's Kinesis streaming destination), for `host run` to
// read instead of the table's DynamoDB stream. `host tables create`
// creates the stream when it does not exist (on-demand capacity) and makes
// it the event table's destination.
type KinesisConfig struct {
	// Stream is the stream's name or ARN (required).
	Stream string `json:"stream"`
	// Endpoint is the Kinesis endpoint, an http or https URL (ddblocal
	// serves Kinesis on its DynamoDB port). Empty: AWS_ENDPOINT_URL_KINESIS;
	// else, when the DynamoDB endpoint is a loopback one (ddblocal), that
	// endpoint; else the AWS default for the region.
	Endpoint string `json:"endpoint,omitempty"`
	// Precision is the destination's ApproximateCreationDateTimePrecision:
	// PrecisionMillisecond (default) or PrecisionMicrosecond.
	Precision string `json:"precision,omitempty"`
}

// The creation-time precisions of a Kinesis streaming destination.
const (
	PrecisionMillisecond = "MILLISECOND"
	PrecisionMicrosecond = "MICROSECOND"
)

var (
	kinesisNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
	kinesisARNRE  = regexp.MustCompile(`^arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\d{12}:stream/([a-zA-Z0-9_.-]{1,128})$`)
)

// StreamName returns the name of the stream Stream names.
func (k KinesisConfig) StreamName() string {
	if m := kinesisARNRE.FindStringSubmatch(k.Stream); m != nil {
		return m[1]
	}
	return k.Stream
}

// KinesisEndpoint returns the endpoint of the sidecar's Kinesis stream:
// sidecar.kinesis.endpoint, else AWS_ENDPOINT_URL_KINESIS, else the
// DynamoDB endpoint (the configuration's or AWS_ENDPOINT_URL_DYNAMODB) when
// it is a loopback one, as ddblocal serves both there; "" for AWS's. A
// local setup so never reaches AWS's Kinesis by default.
func (c *Config) KinesisEndpoint() string {
	if c.Sidecar != nil && c.Sidecar.Kinesis != nil && c.Sidecar.Kinesis.Endpoint != "" {
		return c.Sidecar.Kinesis.Endpoint
	}
	if ep := os.Getenv(kinesisclient.EndpointEnv); ep != "" {
		return ep
	}
	ep := c.Endpoint
	if ep == "" {
		ep = os.Getenv(ddbclient.EndpointEnv)
	}
	if u, err := url.Parse(ep); err == nil && ep != "" {
		if h := u.Hostname(); h == "localhost" || (net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback()) {
			return ep
		}
	}
	return ""
}

// EffectivePrecision is Precision with its default.
func (k KinesisConfig) EffectivePrecision() string {
	if k.Precision == "" {
		return PrecisionMillisecond
	}
	return k.Precision
}

func (k *KinesisConfig) validate(ps *problems, path string) {
	switch {
	case k.Stream == "":
		ps.add(path+".stream", "is required: name the Kinesis data stream (its name or ARN) the event table streams to")
	case strings.HasPrefix(k.Stream, "arn:"):
		if !kinesisARNRE.MatchString(k.Stream) {
			ps.add(path+".stream", "%q is not a Kinesis stream ARN: use arn:aws:kinesis:REGION:ACCOUNT:stream/NAME, or the stream's name", k.Stream)
		}
	case !kinesisNameRE.MatchString(k.Stream):
		ps.add(path+".stream", "%q is not a Kinesis stream name: use 1 to 128 letters, digits, '_', '.' or '-', or the stream's ARN", k.Stream)
	}
	if k.Endpoint != "" {
		if u, err := url.Parse(k.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			ps.add(path+".endpoint", "%q is not an http or https URL: use one like http://127.0.0.1:8000, or leave it out for AWS_ENDPOINT_URL_KINESIS or AWS's", k.Endpoint)
		}
	}
	if k.Precision != "" && k.Precision != PrecisionMillisecond && k.Precision != PrecisionMicrosecond {
		ps.add(path+".precision", "%q is not a precision: use %q (default) or %q", k.Precision, PrecisionMillisecond, PrecisionMicrosecond)
	}
}

// KinesisReport is what CreateTables found or did for the sidecar's Kinesis
// stream.
type KinesisReport struct {
	Stream        string // its ARN
	Created       bool   // it did not exist and was created (on-demand)
	Destination   string // the event table it is the destination of
	Enabled       bool   // the destination was not active and was enabled
	PrecisionSet  bool   // it was active with another precision, now changed
	PrecisionUsed string
}

// ensureKinesis creates the sidecar's Kinesis stream when it does not exist
// and makes it the event table's streaming destination.
func (h *Host) ensureKinesis(ctx context.Context, k KinesisConfig) (KinesisReport, error) {
	rep := KinesisReport{Destination: h.cfg.EventStore.Table, PrecisionUsed: k.EffectivePrecision()}
	kc, err := kinesisclient.NewClient(ctx, h.cfg.KinesisEndpoint(), h.cfg.Region)
	if err != nil {
		return rep, err
	}
	ref := func() (*string, *string) {
		if strings.HasPrefix(k.Stream, "arn:") {
			return nil, aws.String(k.Stream)
		}
		return aws.String(k.Stream), nil
	}
	name, arn := ref()
	sum, err := kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: name, StreamARN: arn})
	var rnf *ktypes.ResourceNotFoundException
	switch {
	case errors.As(err, &rnf):
		if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(k.StreamName()),
			StreamModeDetails: &ktypes.StreamModeDetails{StreamMode: ktypes.StreamModeOnDemand}}); err != nil {
			return rep, fmt.Errorf("creating the Kinesis stream %s: %w", k.StreamName(), err)
		}
		rep.Created = true
	case err != nil:
		return rep, fmt.Errorf("describing the Kinesis stream %s: %w", k.Stream, err)
	}
	// wait until it is ACTIVE (a new stream is CREATING for a while on AWS)
	for deadline := time.Now().Add(5 * time.Minute); ; {
		if sum != nil && sum.StreamDescriptionSummary.StreamStatus == ktypes.StreamStatusActive {
			break
		}
		if time.Now().After(deadline) {
			return rep, fmt.Errorf("the Kinesis stream %s is not ACTIVE after 5 minutes", k.Stream)
		}
		if sum != nil {
			select {
			case <-ctx.Done():
				return rep, ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if sum, err = kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: name, StreamARN: arn}); err != nil {
			return rep, fmt.Errorf("describing the Kinesis stream %s: %w", k.Stream, err)
		}
	}
	rep.Stream = aws.ToString(sum.StreamDescriptionSummary.StreamARN)
	st, err := h.db.EnsureKinesisDestination(ctx, h.cfg.EventStore.Table, rep.Stream, rep.PrecisionUsed)
	if err != nil {
		return rep, err
	}
	rep.Enabled, rep.PrecisionSet = st.Enabled, st.Updated
	return rep, nil
}
