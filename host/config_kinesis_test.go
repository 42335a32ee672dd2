package host_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

// TestK3_SidecarKinesisConfigNamesTheJSONPathOfEachMistake: a missing
// stream, a malformed ARN or name, an endpoint that is no URL and an
// unknown precision are each refused at their JSON path.
func TestK3_SidecarKinesisConfigNamesTheJSONPathOfEachMistake(t *testing.T) {
	cases := map[string]string{
		`{}`: "sidecar.kinesis.stream is required",
		`{"stream": "arn:aws:kinesis:us-east-1:12:stream/x"}`: `sidecar.kinesis.stream: "arn:aws:kinesis:us-east-1:12:stream/x" is not a Kinesis stream ARN`,
		`{"stream": "bad name"}`:                              `sidecar.kinesis.stream: "bad name" is not a Kinesis stream name`,
		`{"stream": "s", "endpoint": "127.0.0.1:8000"}`:       `sidecar.kinesis.endpoint: "127.0.0.1:8000" is not an http or https URL`,
		`{"stream": "s", "precision": "NANOSECOND"}`:          `sidecar.kinesis.precision: "NANOSECOND" is not a precision`,
		`{"stream": "s", "shards": 4}`:                        `unknown field "shards"`,
	}
	for kin, want := range cases {
		_, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "kinesis": `+kin+`}`, 1)))
		require.Error(t, err, kin)
		assert.Contains(t, err.Error(), want, kin)
	}
	for _, ok := range []string{`{"stream": "orders-changes"}`,
		`{"stream": "arn:aws:kinesis:eu-west-1:123456789012:stream/orders-changes", "endpoint": "http://127.0.0.1:8000", "precision": "MICROSECOND"}`} {
		cfg, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "kinesis": `+ok+`}`, 1)))
		require.NoError(t, err, ok)
		assert.Equal(t, "orders-changes", cfg.Sidecar.Kinesis.StreamName())
	}
}

// TestK3_KinesisEndpointFallsBackToALoopbackDynamoDBEndpointNeverToAWS:
// the configured endpoint wins, then AWS_ENDPOINT_URL_KINESIS, then a
// loopback DynamoDB endpoint (ddblocal serves both); a remote DynamoDB
// endpoint leaves Kinesis to the SDK's default.
func TestK3_KinesisEndpointFallsBackToALoopbackDynamoDBEndpointNeverToAWS(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_KINESIS", "")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	parse := func(endpoint, kin string) *host.Config {
		t.Helper()
		cfg, err := host.ParseConfig([]byte(strings.Replace(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "kinesis": `+kin+`}`, 1),
			`"eventStore"`, `"endpoint": "`+endpoint+`", "eventStore"`, 1)))
		require.NoError(t, err)
		return cfg
	}
	assert.Equal(t, "http://127.0.0.1:9000", parse("http://127.0.0.1:8000", `{"stream": "s", "endpoint": "http://127.0.0.1:9000"}`).KinesisEndpoint())
	assert.Equal(t, "http://127.0.0.1:8000", parse("http://127.0.0.1:8000", `{"stream": "s"}`).KinesisEndpoint())
	assert.Equal(t, "http://localhost:8000", parse("http://localhost:8000", `{"stream": "s"}`).KinesisEndpoint())
	assert.Equal(t, "", parse("https://dynamodb.eu-west-1.amazonaws.com", `{"stream": "s"}`).KinesisEndpoint())
	t.Setenv("AWS_ENDPOINT_URL_KINESIS", "http://127.0.0.1:7000")
	assert.Equal(t, "http://127.0.0.1:7000", parse("http://127.0.0.1:8000", `{"stream": "s"}`).KinesisEndpoint())
}
