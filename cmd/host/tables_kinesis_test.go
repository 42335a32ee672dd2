package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/kinesisclient"
)

// TestK3_TablesCreateSetsUpTheKinesisDestination: with sidecar.kinesis
// (no endpoint: ddblocal's DynamoDB one serves Kinesis too), `host tables
// create` creates the Kinesis stream (on-demand) and makes it the event
// table's streaming destination with the configured precision;
// a second run finds it all in place; appended events then land in the
// Kinesis stream.
func TestK3_TablesCreateSetsUpTheKinesisDestination(t *testing.T) {
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": "shop-events", "schema": "shop", "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "unused.wasm", "table": "order-summaries", "checkpoint": {"field": "version"}}],
  "sidecar": {"leaseTable": "leases", "kinesis": {"stream": "shop-changes", "precision": "MICROSECOND"}}
}`, srv.Endpoint())), 0o644))
	t.Setenv(kinesisclient.EndpointEnv, "") // without an endpoint, the loopback DynamoDB one serves Kinesis too
	var out bytes.Buffer
	old := tablesOut
	tablesOut = &out
	defer func() { tablesOut = old }()
	require.NoError(t, runTables(context.Background(), []string{"create", "--config", cfgPath}))
	assert.Regexp(t, `arn:aws:kinesis:us-east-1:000000000000:stream/shop-changes\s+kinesis stream\s+created \(on-demand\); streaming destination of shop-events enabled \(MICROSECOND\)`, out.String())
	out.Reset()
	require.NoError(t, runTables(context.Background(), []string{"create", "--config", cfgPath}))
	assert.Regexp(t, `shop-changes\s+kinesis stream\s+exists; already the streaming destination of shop-events\n`, out.String())

	ctx := context.Background()
	db, err := ddbclient.NewClient(ctx, srv.Endpoint(), "")
	require.NoError(t, err)
	d, err := db.DescribeKinesisStreamingDestination(ctx, &dynamodb.DescribeKinesisStreamingDestinationInput{TableName: aws.String("shop-events")})
	require.NoError(t, err)
	require.Len(t, d.KinesisDataStreamDestinations, 1)
	assert.Equal(t, types.DestinationStatusActive, d.KinesisDataStreamDestinations[0].DestinationStatus)
	assert.Equal(t, types.ApproximateCreationDateTimePrecisionMicrosecond, d.KinesisDataStreamDestinations[0].ApproximateCreationDateTimePrecision)

	captureStdout(t, func() {
		require.NoError(t, runAppend(ctx, []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--type", "OrderPlaced"}))
	})
	shards, err := srv.KinesisShards(ctx, "shop-changes")
	require.NoError(t, err)
	records := 0
	for _, sh := range shards {
		records += sh.Records
	}
	assert.Equal(t, 4, len(shards), "an on-demand stream starts with 4 shards")
	assert.Positive(t, records, "the appended event reached the Kinesis stream")

	kc, err := kinesisclient.NewClient(ctx, srv.Endpoint(), "")
	require.NoError(t, err)
	sum, err := kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("shop-changes")})
	require.NoError(t, err)
	assert.Equal(t, ktypes.StreamModeOnDemand, sum.StreamDescriptionSummary.StreamModeDetails.StreamMode)
	// a table already streaming elsewhere is named, not silently switched
	other := filepath.Join(t.TempDir(), "other.json")
	cfg, _ := os.ReadFile(cfgPath)
	require.NoError(t, os.WriteFile(other, bytes.Replace(cfg, []byte(`"shop-changes"`), []byte(`"other-changes"`), 1), 0o644))
	err = runTables(ctx, []string{"create", "--config", other})
	require.Error(t, err)
	assert.ErrorContains(t, err, "table shop-events streams to the Kinesis stream arn:aws:kinesis:us-east-1:000000000000:stream/shop-changes, not arn:aws:kinesis:us-east-1:000000000000:stream/other-changes")
}
