package sidecar

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/kfeed"
	"github.com/dynafold/dynafold/internal/kinesisclient"
)

// KinesisAPI is the part of the Kinesis client the reader calls when the
// sidecar section names a Kinesis data stream (sidecar.kinesis);
// *kinesis.Client implements it.
type KinesisAPI interface {
	DescribeStreamSummary(ctx context.Context, in *kinesis.DescribeStreamSummaryInput, optFns ...func(*kinesis.Options)) (*kinesis.DescribeStreamSummaryOutput, error)
	ListShards(ctx context.Context, in *kinesis.ListShardsInput, optFns ...func(*kinesis.Options)) (*kinesis.ListShardsOutput, error)
	GetShardIterator(ctx context.Context, in *kinesis.GetShardIteratorInput, optFns ...func(*kinesis.Options)) (*kinesis.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *kinesis.GetRecordsInput, optFns ...func(*kinesis.Options)) (*kinesis.GetRecordsOutput, error)
}

var _ KinesisAPI = (*kinesis.Client)(nil)

// kinesisClient returns kin, or builds the Kinesis client of the
// configuration's sidecar.kinesis; nil when it names no Kinesis stream.
func kinesisClient(ctx context.Context, cfg *host.Config, kin KinesisAPI) (KinesisAPI, error) {
	if cfg.Sidecar == nil || cfg.Sidecar.Kinesis == nil {
		return nil, nil
	}
	if kin != nil {
		return kin, nil
	}
	c, err := kinesisclient.NewClient(ctx, cfg.KinesisEndpoint(), cfg.Region)
	if err != nil {
		return nil, fmt.Errorf("Kinesis client for sidecar.kinesis: %w", err)
	}
	// GetRecords on the wire path (kfeed.WithWire): the client runs no
	// middleware but KeepConnections
	return kfeed.WithWire(ctx, c), nil
}

// openSource opens the change feed the configuration reads: the Kinesis
// data stream of sidecar.kinesis when set (through kin), else the event
// table's newest DynamoDB stream (through api).
func openSource(ctx context.Context, cfg *host.Config, api StreamsAPI, kin KinesisAPI, o feed.Options) (feed.Source, error) {
	if cfg.Sidecar != nil && cfg.Sidecar.Kinesis != nil {
		return kfeed.Open(ctx, kin, cfg.Sidecar.Kinesis.Stream, kfeed.Options{BatchSize: o.BatchSize, PollInterval: o.PollInterval})
	}
	arn, err := feed.LatestStream(ctx, api, cfg.EventStore.Table)
	if err != nil {
		return nil, err
	}
	return feed.NewReader(api, arn, o), nil
}
