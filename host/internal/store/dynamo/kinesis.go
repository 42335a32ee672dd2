package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DestinationState is what EnsureKinesisDestination found or did.
type DestinationState struct {
	Enabled bool // the destination was not active, and was enabled
	Updated bool // it was active with another precision, which was changed
}

// EnsureKinesisDestination makes the Kinesis stream streamArn the table's
// active streaming destination with the given creation-time precision
// (MILLISECOND or MICROSECOND): enabled when it is not, its precision
// updated when it differs. A table streaming to another Kinesis stream is
// an error naming both: a table has one active destination.
func (d *DB) EnsureKinesisDestination(ctx context.Context, table, streamArn, precision string) (DestinationState, error) {
	var st DestinationState
	out, err := d.client.DescribeKinesisStreamingDestination(ctx, &dynamodb.DescribeKinesisStreamingDestinationInput{TableName: aws.String(table)}, d.opt)
	if err != nil {
		return st, mapError("DescribeKinesisStreamingDestination "+table, err)
	}
	p := types.ApproximateCreationDateTimePrecision(precision)
	for _, dest := range out.KinesisDataStreamDestinations {
		switch dest.DestinationStatus {
		case types.DestinationStatusActive, types.DestinationStatusEnabling, types.DestinationStatusUpdating:
		default:
			continue
		}
		if arn := aws.ToString(dest.StreamArn); arn != streamArn {
			return st, fmt.Errorf("table %s streams to the Kinesis stream %s, not %s: disable that destination (DisableKinesisStreamingDestination) or name that stream in sidecar.kinesis.stream", table, arn, streamArn)
		}
		if dest.ApproximateCreationDateTimePrecision == p || (p == types.ApproximateCreationDateTimePrecisionMillisecond && dest.ApproximateCreationDateTimePrecision == "") {
			return st, nil
		}
		if _, err := d.client.UpdateKinesisStreamingDestination(ctx, &dynamodb.UpdateKinesisStreamingDestinationInput{TableName: aws.String(table), StreamArn: aws.String(streamArn),
			UpdateKinesisStreamingConfiguration: &types.UpdateKinesisStreamingConfiguration{ApproximateCreationDateTimePrecision: p}}, d.opt); err != nil {
			return st, mapError("UpdateKinesisStreamingDestination "+table, err)
		}
		st.Updated = true
		return st, nil
	}
	if _, err := d.client.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String(table), StreamArn: aws.String(streamArn),
		EnableKinesisStreamingConfiguration: &types.EnableKinesisStreamingConfiguration{ApproximateCreationDateTimePrecision: p}}, d.opt); err != nil {
		return st, mapError("EnableKinesisStreamingDestination "+table, err)
	}
	st.Enabled = true
	return st, nil
}
