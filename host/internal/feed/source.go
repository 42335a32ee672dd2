package feed

import "context"

// Source is a change feed read shard by shard: a DynamoDB stream (*Reader)
// or a Kinesis data stream a table streams its changes to (kfeed.Reader).
// The change-feed daemon reads either through it.
type Source interface {
	// StreamArn is the ARN of the stream read.
	StreamArn() string
	// Shards lists every shard of the stream with its lineage.
	Shards(ctx context.Context) ([]Shard, error)
	// Children lists the shards that continue a closed shard's keys.
	Children(ctx context.Context, parentID string) ([]Shard, error)
	// Open returns a reader of one shard that starts just after
	// checkpoint, or at the shard's oldest record kept when it is "".
	Open(shardID, checkpoint string) ShardReader
}

// ShardReader reads one shard from a position (see ShardIterator, whose
// methods these are). It is not safe for concurrent use.
type ShardReader interface {
	// Next returns the shard's next batch and moves past it.
	Next(ctx context.Context) (Batch, error)
	// Rewind makes reading continue at seq, inclusive.
	Rewind(seq string)
	// Seek makes reading continue just after afterSeq, or at the shard's
	// oldest record kept when it is "".
	Seek(afterSeq string)
	// Position is where the next Next continues.
	Position() Position
}

var (
	_ Source      = (*Reader)(nil)
	_ ShardReader = (*ShardIterator)(nil)
)
