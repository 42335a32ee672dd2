package streams

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/bbolt"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// Errors of Split and Shards, wrapped with the stream and shard they name.
var (
	ErrStreamNotFound = errors.New("no such stream")
	ErrShardNotFound  = errors.New("no such shard")
	ErrShardClosed    = errors.New("the shard is closed")
	ErrStreamDisabled = errors.New("the stream is disabled")
	ErrShardTooNarrow = errors.New("the shard's key range holds a single hash")
)

// errUnchanged rolls back the transaction of a restructuring that found
// nothing to do.
var errUnchanged = errors.New("streams: nothing to restructure")

// restructure runs change, which opens or closes shards of s (s.mu held)
// and returns the shards it opened or closed (nil: it changed nothing; an
// empty slice: only the stream itself changed). With DB, it runs in a
// transaction of its own that stores the stream and those shards, and
// readers see them opened or closed only once it has committed: a reader
// never finishes a shard whose closing a crash could undo.
func (r *Registry) restructure(s *stream, change func() []*shard) error {
	if r.opts.DB == nil {
		s.mu.Lock()
		changed := change()
		s.mu.Unlock()
		if changed != nil {
			r.markDirty(s)
		}
		return nil
	}
	err := r.opts.DB.Update(func(tx *bbolt.Tx) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		changed := change()
		if changed == nil {
			return errUnchanged
		}
		mark := r.seq.Add(1) // numbers no record: the moment the change shows
		for _, sh := range changed {
			sh.show(mark)
		}
		if _, err := writeShardsTx(wal.Bolt(tx), s, nil, r.seq.Load()); err != nil {
			return err
		}
		tx.OnCommit(func() { r.publish(mark) })
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("streams: storing a shard change of %s: %w", s.arn, err)
	}
	return nil
}

// housekeep brings s up to date before a read at now: it rolls over the
// open shards that reached ShardMaxAge (stored at once, see restructure)
// and trims records past retention (written behind).
func (r *Registry) housekeep(s *stream, now time.Time) {
	s.mu.RLock()
	roll, trim := s.due(now)
	s.mu.RUnlock()
	if roll {
		if err := r.restructure(s, func() []*shard { return s.rollAged(r, now) }); err != nil {
			slog.Error("ddblocal streams: rolling over aged shards", "stream", s.arn, "err", err)
		}
	}
	if trim {
		s.mu.Lock()
		changed := s.trim(r, now)
		s.mu.Unlock()
		if changed {
			r.markDirty(s)
		}
	}
}

// Split splits the open shard shardID of the stream arn as DynamoDB does
// when a partition splits: the shard closes, and two children open with it
// as their parent, the first taking the lower half of its partition-key
// hashes, the second the upper half. It returns the children's ids. With
// DB, the split is stored before Split returns.
func (r *Registry) Split(arn, shardID string) ([]string, error) {
	s := r.lookup(arn)
	if s == nil {
		return nil, fmt.Errorf("streams: split %s: %w: %s", shardID, ErrStreamNotFound, arn)
	}
	now := r.now()
	var ids []string
	var bad error
	err := r.restructure(s, func() []*shard {
		sh := s.shard(shardID)
		switch {
		case sh == nil:
			bad = fmt.Errorf("streams: split: %w: %s in stream %s", ErrShardNotFound, shardID, arn)
		case s.status != StatusEnabled:
			bad = fmt.Errorf("streams: split %s: %w: %s", shardID, ErrStreamDisabled, arn)
		case sh.end != 0:
			bad = fmt.Errorf("streams: split %s of %s: %w; split one of its descendants that is open", shardID, arn, ErrShardClosed)
		case sh.lo == sh.hi:
			bad = fmt.Errorf("streams: split %s of %s: %w", shardID, arn, ErrShardTooNarrow)
		}
		if bad != nil {
			return nil
		}
		changed := s.split(r, now, s.route(sh.lo))
		ids = []string{changed[1].id, changed[2].id}
		return changed
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Roll closes the open shard shardID of the stream arn and opens its one
// child with the same key range, as DynamoDB rolls a shard over (by age,
// ShardMaxAge, or count, ShardMaxRecords), now instead of when the shard
// reaches its limit. It returns the child's id. With DB, the rollover is
// stored before Roll returns.
func (r *Registry) Roll(arn, shardID string) (string, error) {
	s := r.lookup(arn)
	if s == nil {
		return "", fmt.Errorf("streams: roll %s: %w: %s", shardID, ErrStreamNotFound, arn)
	}
	now := r.now()
	var id string
	var bad error
	err := r.restructure(s, func() []*shard {
		sh := s.shard(shardID)
		switch {
		case sh == nil:
			bad = fmt.Errorf("streams: roll: %w: %s in stream %s", ErrShardNotFound, shardID, arn)
		case s.status != StatusEnabled:
			bad = fmt.Errorf("streams: roll %s: %w: %s", shardID, ErrStreamDisabled, arn)
		case sh.end != 0:
			bad = fmt.Errorf("streams: roll %s of %s: %w; roll one of its descendants that is open", shardID, arn, ErrShardClosed)
		}
		if bad != nil {
			return nil
		}
		changed := s.roll(r, now, s.route(sh.lo))
		id = changed[1].id
		return changed
	})
	if bad != nil {
		return "", bad
	}
	if err != nil {
		return "", err
	}
	return id, nil
}

// ShardInfo describes one shard for Go callers (Shards): what
// DescribeStream lists, and the range of partition-key hashes it takes.
type ShardInfo struct {
	ID, ParentID string
	// StartingSequenceNumber and EndingSequenceNumber are DescribeStream's
	// SequenceNumberRange; EndingSequenceNumber is "" while the shard is open.
	StartingSequenceNumber, EndingSequenceNumber string
	// HashStart and HashEnd bound, inclusively, the partition-key hashes
	// whose records the shard takes.
	HashStart, HashEnd uint64
	// Records is the number of records the shard has taken.
	Records int
}

// Open reports whether the shard still takes records.
func (i ShardInfo) Open() bool { return i.EndingSequenceNumber == "" }

// Shards returns the shards of the stream arn, parents before children,
// as DescribeStream lists them (after the same housekeeping), with their
// hash ranges.
func (r *Registry) Shards(arn string) ([]ShardInfo, error) {
	s := r.lookup(arn)
	if s == nil {
		return nil, fmt.Errorf("streams: %w: %s", ErrStreamNotFound, arn)
	}
	r.housekeep(s, r.now())
	upTo := r.visibleUpTo()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []ShardInfo
	for _, sh := range s.shards {
		if !sh.listed(upTo) {
			continue
		}
		i := ShardInfo{ID: sh.id, ParentID: sh.parent, StartingSequenceNumber: formatSeq(sh.start),
			HashStart: sh.lo, HashEnd: sh.hi, Records: sh.count}
		if sh.closedFor(upTo) {
			i.EndingSequenceNumber = formatSeq(sh.end)
		}
		out = append(out, i)
	}
	return out, nil
}
