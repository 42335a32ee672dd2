package streams

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"go.etcd.io/bbolt"
)

// load reads every persisted stream into the registry.
func (r *Registry) load() error {
	maxSeq := uint64(0)
	err := r.opts.DB.View(func(tx *bbolt.Tx) error {
		root := tx.Bucket(rootBucket)
		if root == nil {
			return nil
		}
		if v := root.Get(seqKey); len(v) == 8 {
			maxSeq = binary.BigEndian.Uint64(v)
		}
		all := root.Bucket(streamsBucket)
		if all == nil {
			return nil
		}
		return all.ForEachBucket(func(arn []byte) error {
			s, top, err := loadStream(string(arn), all.Bucket(arn))
			if err != nil {
				return fmt.Errorf("stream %s: %w", arn, err)
			}
			maxSeq = max(maxSeq, top)
			s.noteRoll(r)
			s.nextTrim = 0 // the first read trims, and learns when to next
			r.streams[s.arn] = s
			return nil
		})
	})
	if err != nil {
		return err
	}
	// Sequence numbers handed out after the last flush of a previous run
	// that crashed were never persisted: skip past them, and record the new
	// floor at once so a second crash cannot reuse numbers either.
	if maxSeq > 0 {
		maxSeq += seqRestartGap
	}
	r.seq.Store(maxSeq)
	r.visible.Store(maxSeq)
	return r.opts.DB.Update(func(tx *bbolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(rootBucket)
		if err != nil {
			return err
		}
		return root.Put(seqKey, seqBytes(maxSeq))
	})
}

// seqRestartGap is how far sequence numbers jump when a Registry reopens a
// database: more than a run can hand out between two flushes.
const seqRestartGap = 1 << 20

func loadStream(arn string, b *bbolt.Bucket) (*stream, uint64, error) {
	var m streamMeta
	if err := json.Unmarshal(b.Get(metaKey), &m); err != nil {
		return nil, 0, fmt.Errorf("meta: %w", err)
	}
	s := &stream{
		arn: arn, label: m.Label, table: m.Table, viewType: m.ViewType, keySchema: m.KeySchema,
		created: fromNano(m.Created), status: m.Status, disabledAt: fromNano(m.DisabledAt), lastMs: m.LastMs,
		byID: map[string]*shard{}, nextRoll: math.MaxInt64, nextTrim: math.MaxInt64,
	}
	top := uint64(0)
	recs := b.Bucket(recordsBucket)
	shards := b.Bucket(shardsBucket)
	if shards == nil {
		return s, 0, nil
	}
	err := shards.ForEach(func(id, v []byte) error {
		var sm shardMeta
		if err := json.Unmarshal(v, &sm); err != nil {
			return fmt.Errorf("shard %s: %w", id, err)
		}
		sh := &shard{
			id: string(id), parent: sm.Parent, created: fromNano(sm.Created), closedAt: fromNano(sm.ClosedAt),
			start: sm.Start, end: sm.End, last: sm.Last, count: sm.Count, trimmed: sm.Trimmed,
			hi: math.MaxUint64, gen: 1, saved: 1,
		}
		if sm.Hash != nil {
			sh.lo, sh.hi = sm.Hash[0], sm.Hash[1]
		}
		top = max(top, sh.start, sh.end, sh.last)
		if recs == nil {
			s.shards = append(s.shards, sh)
			return nil
		}
		if rb := recs.Bucket(id); rb != nil {
			if err := rb.ForEach(func(k, v []byte) error {
				var d recordDisk
				if err := json.Unmarshal(v, &d); err != nil {
					return fmt.Errorf("record: %w", err)
				}
				rec := &record{
					seq: binary.BigEndian.Uint64(k), eventName: d.N, at: time.Unix(0, d.T),
					keys: d.K, oldImage: d.O, newImage: d.I, identity: d.U, size: d.Z,
				}
				if rec.seq > sh.trimmed {
					sh.records = append(sh.records, rec)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if n := len(sh.records); n > 0 {
			sh.persist = sh.records[n-1].seq
			top = max(top, sh.persist)
		}
		s.shards = append(s.shards, sh)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sortShards(s.shards)
	if err := s.index(); err != nil {
		return nil, 0, err
	}
	return s, top, nil
}

// index rebuilds what a loaded stream derives from its shards: the shards
// by id, the open shards by hash range (which must cover every hash once
// while the stream is enabled), and when to roll over and trim next.
func (s *stream) index() error {
	s.open = nil
	for _, sh := range s.shards {
		s.byID[sh.id] = sh
		if sh.end == 0 {
			s.open = append(s.open, sh)
		}
	}
	sort.Slice(s.open, func(i, j int) bool { return s.open[i].lo < s.open[j].lo })
	if s.status == StatusEnabled {
		next := uint64(0)
		for i, sh := range s.open {
			if sh.lo != next || sh.hi < sh.lo || (i > 0 && s.open[i-1].hi == math.MaxUint64) {
				return fmt.Errorf("the open shards do not cover every partition key once (shard %s takes hashes %d to %d, expected from %d)", sh.id, sh.lo, sh.hi, next)
			}
			next = sh.hi + 1
		}
		if len(s.open) == 0 || s.open[len(s.open)-1].hi != math.MaxUint64 {
			return fmt.Errorf("the open shards do not cover every partition key (%d open)", len(s.open))
		}
	}
	return nil
}
