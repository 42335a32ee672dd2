package kinesis

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the Go API (Shards, Split, Merge); match them with errors.Is.
var (
	ErrStreamNotFound = errors.New("no such Kinesis stream")
	ErrShardNotFound  = errors.New("no such shard")
	ErrShardClosed    = errors.New("the shard is closed")
	ErrNotAdjacent    = errors.New("the shards are not adjacent")
	ErrShardTooNarrow = errors.New("the shard takes too few hash keys to split")
)

// ShardInfo describes one shard for Go callers, as ListShards lists it.
type ShardInfo struct {
	ID, ParentID, AdjacentParentID               string
	StartingHashKey, EndingHashKey               string // decimal
	StartingSequenceNumber, EndingSequenceNumber string // EndingSequenceNumber "" while open
	Records                                      int    // records kept (not trimmed)
	Held                                         bool   // a record is held back by the reordering fault
}

// Open reports whether the shard still takes records.
func (i ShardInfo) Open() bool { return i.EndingSequenceNumber == "" }

// Name returns the name of the stream a name or ARN names.
func Name(nameOrARN string) string {
	if i := strings.LastIndex(nameOrARN, ":stream/"); i >= 0 && strings.HasPrefix(nameOrARN, "arn:") {
		return nameOrARN[i+len(":stream/"):]
	}
	return nameOrARN
}

// ARN returns the ARN of the stream a name or ARN names, and whether this
// registry has it.
func (r *Registry) ARN(nameOrARN string) (string, bool) {
	name := Name(nameOrARN)
	s := r.lookup(name)
	if s == nil || (strings.HasPrefix(nameOrARN, "arn:") && nameOrARN != s.arn) {
		return r.arnOf(name), false
	}
	return s.arn, true
}

func (r *Registry) goStream(nameOrARN string) (*stream, error) {
	if _, ok := r.ARN(nameOrARN); !ok {
		return nil, fmt.Errorf("kinesis: %w: %s", ErrStreamNotFound, nameOrARN)
	}
	if s := r.lookup(Name(nameOrARN)); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("kinesis: %w: %s", ErrStreamNotFound, nameOrARN)
}

// Shards returns the shards of a stream still listed, parents before
// children.
func (r *Registry) Shards(nameOrARN string) ([]ShardInfo, error) {
	s, err := r.goStream(nameOrARN)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []ShardInfo
	for _, sh := range s.shards {
		if sh.gone {
			continue
		}
		v := shardView(sh)
		out = append(out, ShardInfo{ID: v.ShardId, ParentID: v.ParentShardId, AdjacentParentID: v.AdjacentParentShardId,
			StartingHashKey: v.HashKeyRange.StartingHashKey, EndingHashKey: v.HashKeyRange.EndingHashKey,
			StartingSequenceNumber: v.SequenceNumberRange.StartingSequenceNumber, EndingSequenceNumber: v.SequenceNumberRange.EndingSequenceNumber,
			Records: len(sh.records), Held: sh.held != nil})
	}
	return out, nil
}

// Split splits an open shard at the middle of its hash keys and returns
// the children's ids (lower half first). With DB it is stored first.
func (r *Registry) Split(nameOrARN, shardID string) ([]string, error) {
	s, err := r.goStream(nameOrARN)
	if err != nil {
		return nil, err
	}
	var ids []string
	err = r.change(s, func(b *sink) error {
		sh := s.shard(shardID)
		switch {
		case sh == nil || sh.gone:
			return fmt.Errorf("kinesis: split: %w: %s in %s", ErrShardNotFound, shardID, s.name)
		case !sh.open():
			return fmt.Errorf("kinesis: split %s of %s: %w", shardID, s.name, ErrShardClosed)
		case sh.hi.cmp(sh.lo.add1().add1()) < 0:
			return fmt.Errorf("kinesis: split %s of %s: %w", shardID, s.name, ErrShardTooNarrow)
		}
		ids, err = r.split(s, shardID, midpoint(sh.lo, sh.hi), b)
		return err
	})
	return ids, err
}

// Merge merges two adjacent open shards and returns the child's id.
func (r *Registry) Merge(nameOrARN, shardID, adjacentID string) (string, error) {
	s, err := r.goStream(nameOrARN)
	if err != nil {
		return "", err
	}
	var id string
	err = r.change(s, func(b *sink) error {
		x, y := s.shard(shardID), s.shard(adjacentID)
		switch {
		case x == nil || x.gone || y == nil || y.gone:
			return fmt.Errorf("kinesis: merge: %w: %s or %s in %s", ErrShardNotFound, shardID, adjacentID, s.name)
		case !x.open() || !y.open():
			return fmt.Errorf("kinesis: merge %s and %s of %s: %w", shardID, adjacentID, s.name, ErrShardClosed)
		case !follows(x, y) && !follows(y, x):
			return fmt.Errorf("kinesis: merge %s and %s of %s: %w", shardID, adjacentID, s.name, ErrNotAdjacent)
		}
		id, err = r.merge(s, shardID, adjacentID, b)
		return err
	})
	return id, err
}
