package ddblocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/kinesis"
	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// KinesisOptions tunes ddblocal's Kinesis Data Streams API; zero fields
// take Kinesis's values.
type KinesisOptions struct {
	// OnDemandShards is how many shards an ON_DEMAND stream, or one
	// created without a ShardCount, starts with (default 4, as Kinesis).
	OnDemandShards int
	// Retention is a new stream's retention period (default 24h).
	Retention time.Duration
	// IteratorTTL expires shard iterators (default 5m, as Kinesis).
	IteratorTTL time.Duration
	// ReadsPerShardPerSecond, when positive, makes GetRecords answer
	// ProvisionedThroughputExceededException past that many calls per
	// second on one shard, as Kinesis does past 5 (default 0: no limit).
	ReadsPerShardPerSecond int
	// Faults are the streaming destination's duplicates and reordering.
	Faults KinesisFaults
}

// KinesisFaults makes the records a table's Kinesis streaming destination
// writes arrive as AWS warns they may ("The Kinesis data stream records
// might appear in a different order than when the item changes occurred.
// The same item notifications might also appear more than once in the
// stream."). DuplicateRate is the probability that a change record is
// written twice; ReorderRate the probability that one is held back and
// written after the next record of its shard (or when its shard is next
// read, split or merged). Seed makes the draws repeatable. Records put
// with PutRecord and PutRecords are never affected. The zero value
// injects nothing.
type KinesisFaults struct {
	DuplicateRate float64
	ReorderRate   float64
	Seed          uint64
}

// SetKinesisFaults replaces the streaming destination's faults at runtime
// (the zero KinesisFaults turns them off).
func (s *Server) SetKinesisFaults(f KinesisFaults) {
	s.kin.SetFaults(kinesis.Faults{DuplicateRate: f.DuplicateRate, ReorderRate: f.ReorderRate, Seed: f.Seed})
}

func newKinesis(opts Options, db kinesisDB) (*kinesis.Registry, error) {
	k := opts.Kinesis
	r, err := kinesis.NewRegistry(kinesis.Options{DB: db, OnDemandShards: k.OnDemandShards, Retention: k.Retention,
		IteratorTTL: k.IteratorTTL, ReadsPerShardPerSecond: k.ReadsPerShardPerSecond, Now: opts.Now,
		Region: opts.Region, AccountID: opts.AccountID})
	if err != nil {
		return nil, err
	}
	r.SetFaults(kinesis.Faults{DuplicateRate: k.Faults.DuplicateRate, ReorderRate: k.Faults.ReorderRate, Seed: k.Faults.Seed})
	return r, nil
}

const kinesisContentType = "application/x-amz-json-1.1"

// serveKinesis answers one Kinesis API request (JSON 1.1); ok is false
// when there is nothing to answer (the client went away).
func (s *Server) serveKinesis(ctx context.Context, reqID, target string, body []byte) (rep reply, ok bool) {
	op := strings.TrimPrefix(target, kinesis.TargetPrefix)
	start := time.Now()
	resp, err := s.dispatchKinesis(ctx, op, body)
	if err != nil {
		if errors.Is(err, errClientGone) || ctx.Err() != nil {
			return reply{}, false
		}
		s.log.Debug("ddblocal kinesis request", "target", target, "id", reqID, "err", err, "took", time.Since(start))
		return s.kinesisErrorReply(err), true
	}
	s.log.Debug("ddblocal kinesis request", "target", target, "id", reqID, "took", time.Since(start))
	return reply{status: http.StatusOK, ct: kinesisContentType, body: resp}, true
}

func (s *Server) dispatchKinesis(ctx context.Context, op string, body []byte) (resp []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("ddblocal: panic serving a Kinesis request", "op", op, "panic", p)
			resp, err = nil, apierr.New("InternalFailure", 500, "Internal service failure")
		}
	}()
	if !kinesis.Supported(op) {
		return nil, apierr.New("UnknownOperationException", 400, "")
	}
	s.stats.add("Kinesis." + op)
	if err := s.faults.before(ctx, "Kinesis."+op, body); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code == FaultThroughput {
			return nil, apierr.New(FaultThroughput, 400, "Rate exceeded for stream under account %s.", s.opts.AccountID)
		}
		return nil, err
	}
	if !json.Valid(body) {
		return nil, apierr.New("SerializationException", 400, "")
	}
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	return s.kin.Handle(ctx, op, body)
}

// kinesisErrorReply answers err in Kinesis's error shape.
func (s *Server) kinesisErrorReply(err error) reply {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		s.log.Error("ddblocal: internal error serving Kinesis", "err", err)
		ae = apierr.New("InternalFailure", 500, "Internal service failure")
	}
	status := ae.Status
	if status == 0 {
		status = 400
	}
	m := map[string]string{"__type": ae.Code}
	if ae.Message != "" {
		m["message"] = ae.Message
	}
	b, _ := json.Marshal(m) // strings only: never fails
	return reply{status: status, ct: kinesisContentType, errType: ae.Code, body: b}
}

// Errors of the Kinesis Go API (KinesisShards, SplitKinesisShard,
// MergeKinesisShards); match them with errors.Is.
var (
	// ErrKinesisStreamNotFound: no Kinesis stream has the name or ARN.
	ErrKinesisStreamNotFound = kinesis.ErrStreamNotFound
	// ErrKinesisShardNotFound: the stream has no such shard (or it passed
	// its retention).
	ErrKinesisShardNotFound = kinesis.ErrShardNotFound
	// ErrKinesisShardClosed: the shard was split or merged already.
	ErrKinesisShardClosed = kinesis.ErrShardClosed
	// ErrKinesisShardsNotAdjacent: two shards to merge do not take
	// adjacent hash key ranges.
	ErrKinesisShardsNotAdjacent = kinesis.ErrNotAdjacent
)

// KinesisShard describes one shard of a Kinesis stream, as ListShards
// lists it, with what a test may want to know besides.
type KinesisShard struct {
	// ShardID, ParentShardID and AdjacentParentShardID are ListShards'
	// ("" for none).
	ShardID, ParentShardID, AdjacentParentShardID string
	// StartingHashKey and EndingHashKey bound, inclusively and in
	// decimal, the hash keys (MD5 of partition keys) the shard takes.
	StartingHashKey, EndingHashKey string
	// StartingSequenceNumber and EndingSequenceNumber are its
	// SequenceNumberRange; EndingSequenceNumber is "" while it is open.
	StartingSequenceNumber, EndingSequenceNumber string
	// Records is how many records it keeps (not trimmed).
	Records int
	// Held reports a change record held back by KinesisFaults.ReorderRate,
	// written after the shard's next record or at its next read.
	Held bool
}

// Open reports whether the shard still takes records.
func (k KinesisShard) Open() bool { return k.EndingSequenceNumber == "" }

// KinesisShards returns the shards of a Kinesis stream (by name or ARN),
// parents before children.
func (s *Server) KinesisShards(ctx context.Context, stream string) ([]KinesisShard, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	infos, err := s.kin.Shards(stream)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	out := make([]KinesisShard, len(infos))
	for i, in := range infos {
		out[i] = KinesisShard{ShardID: in.ID, ParentShardID: in.ParentID, AdjacentParentShardID: in.AdjacentParentID,
			StartingHashKey: in.StartingHashKey, EndingHashKey: in.EndingHashKey,
			StartingSequenceNumber: in.StartingSequenceNumber, EndingSequenceNumber: in.EndingSequenceNumber,
			Records: in.Records, Held: in.Held}
	}
	return out, nil
}

// SplitKinesisShard splits an open shard of a Kinesis stream (by name or
// ARN) at the middle of its hash keys, as SplitShard with that
// NewStartingHashKey, and returns the children's ids, the lower half
// first. With a DataDir, the split is stored before it returns.
func (s *Server) SplitKinesisShard(ctx context.Context, stream, shardID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ids, err := s.kin.Split(stream, shardID)
	if err != nil {
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	return ids, nil
}

// MergeKinesisShards merges two adjacent open shards of a Kinesis stream,
// as MergeShards, and returns the child's id (its ParentShardId is
// shardID, its AdjacentParentShardId adjacentID).
func (s *Server) MergeKinesisShards(ctx context.Context, stream, shardID, adjacentID string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	id, err := s.kin.Merge(stream, shardID, adjacentID)
	if err != nil {
		return "", fmt.Errorf("ddblocal: %w", err)
	}
	return id, nil
}

type kinesisDB = wal.DB
