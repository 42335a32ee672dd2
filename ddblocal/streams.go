package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/streams"
)

// Errors of SplitShard, RollShard and StreamShards; match them with errors.Is.
var (
	// ErrStreamNotFound: no stream has the ARN, or the table has none.
	ErrStreamNotFound = streams.ErrStreamNotFound
	// ErrShardNotFound: the stream has no shard with the id.
	ErrShardNotFound = streams.ErrShardNotFound
	// ErrShardClosed: the shard was closed (rolled over, split, or its
	// stream disabled); only an open shard splits.
	ErrShardClosed = streams.ErrShardClosed
	// ErrStreamDisabled: the stream is disabled; its shards are all closed.
	ErrStreamDisabled = streams.ErrStreamDisabled
	// ErrShardTooNarrow: the shard takes a single partition-key hash, so it
	// cannot be divided.
	ErrShardTooNarrow = streams.ErrShardTooNarrow
)

// StreamShard describes one shard of a stream, as StreamShards returns it.
type StreamShard struct {
	// ShardID and ParentShardID are as DescribeStream lists them
	// (ParentShardID "" for none).
	ShardID, ParentShardID string
	// StartingSequenceNumber and EndingSequenceNumber are the shard's
	// SequenceNumberRange; EndingSequenceNumber is "" while it is open.
	StartingSequenceNumber, EndingSequenceNumber string
	// HashKeyStart and HashKeyEnd bound, inclusively, the 64-bit hashes of
	// the partition keys whose records the shard takes. DynamoDB Streams
	// does not show them; ddblocal's open shards cover every hash once.
	HashKeyStart, HashKeyEnd uint64
	// Records is how many records the shard has taken.
	Records int
}

// Open reports whether the shard still takes records.
func (s StreamShard) Open() bool { return s.EndingSequenceNumber == "" }

// StreamShards returns the shards of a stream, parents before children, as
// DescribeStream lists them, with the hash range each takes. tableOrArn is
// a stream ARN, or a table name for its latest stream.
func (s *Server) StreamShards(ctx context.Context, tableOrArn string) ([]StreamShard, error) {
	arn, err := s.streamArn(ctx, tableOrArn)
	if err != nil {
		return nil, err
	}
	infos, err := s.streams.Shards(arn)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	out := make([]StreamShard, len(infos))
	for i, in := range infos {
		out[i] = StreamShard{ShardID: in.ID, ParentShardID: in.ParentID,
			StartingSequenceNumber: in.StartingSequenceNumber, EndingSequenceNumber: in.EndingSequenceNumber,
			HashKeyStart: in.HashStart, HashKeyEnd: in.HashEnd, Records: in.Records}
	}
	return out, nil
}

// SplitShard splits an open shard of a stream the way DynamoDB splits a
// partition: the shard closes, and two children open with it as their
// ParentShardId, the first taking the lower half of its partition-key
// hashes, the second the upper half. It returns the children's ids.
// tableOrArn is a stream ARN, or a table name for its latest stream. With
// a DataDir, the split is stored before SplitShard returns.
func (s *Server) SplitShard(ctx context.Context, tableOrArn, shardID string) ([]string, error) {
	arn, err := s.streamArn(ctx, tableOrArn)
	if err != nil {
		return nil, err
	}
	ids, err := s.streams.Split(arn, shardID)
	if err != nil {
		return nil, s.restructureErr(err)
	}
	return ids, nil
}

// RollShard rolls an open shard of a stream over, as DynamoDB does when a
// shard reaches its age: the shard closes, and one child with it as its
// ParentShardId opens, taking the same partition-key hashes. It returns
// the child's id. tableOrArn is a stream ARN, or a table name for its
// latest stream. With a DataDir, the rollover is stored before RollShard
// returns. Tests use it to force a rollover instead of waiting for
// StreamOptions.ShardMaxAge.
func (s *Server) RollShard(ctx context.Context, tableOrArn, shardID string) (string, error) {
	arn, err := s.streamArn(ctx, tableOrArn)
	if err != nil {
		return "", err
	}
	id, err := s.streams.Roll(arn, shardID)
	if err != nil {
		return "", s.restructureErr(err)
	}
	return id, nil
}

// restructureErr wraps an error of a split or rollover; one the registry
// could not store marks the store failed first (memory holds a change the
// data file may lack).
func (s *Server) restructureErr(err error) error {
	for _, known := range []error{ErrStreamNotFound, ErrShardNotFound, ErrShardClosed, ErrStreamDisabled, ErrShardTooNarrow} {
		if errors.Is(err, known) {
			return fmt.Errorf("ddblocal: %w", err)
		}
	}
	s.failStore(err)
	return fmt.Errorf("ddblocal: %w", err)
}

// streamArn resolves a stream ARN, or a table name to its latest stream's.
func (s *Server) streamArn(ctx context.Context, tableOrArn string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if strings.HasPrefix(tableOrArn, "arn:") {
		return tableOrArn, nil
	}
	s.catMu.RLock()
	t := s.tables[tableOrArn]
	s.catMu.RUnlock()
	if t == nil {
		return "", fmt.Errorf("ddblocal: %w: table %s does not exist", ErrStreamNotFound, tableOrArn)
	}
	t.mu.RLock()
	arn := t.meta.StreamArn
	t.mu.RUnlock()
	if arn == "" {
		return "", fmt.Errorf("ddblocal: %w: table %s has no stream; enable one (StreamSpecification) first", ErrStreamNotFound, tableOrArn)
	}
	return arn, nil
}
