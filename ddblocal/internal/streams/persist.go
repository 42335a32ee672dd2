package streams

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// Bucket layout, all under rootBucket:
//
//	seq                      last sequence number handed out (8 bytes, big endian)
//	streams/<arn>/meta       the stream (JSON)
//	streams/<arn>/shards/<id>            a shard (JSON)
//	streams/<arn>/records/<id>/<seq>     a record (JSON, images in DynamoDB JSON)
var (
	rootBucket    = []byte("ddblocal.streams")
	seqKey        = []byte("seq")
	streamsBucket = []byte("streams")
	metaKey       = []byte("meta")
	shardsBucket  = []byte("shards")
	recordsBucket = []byte("records")
)

// ErrClosed is returned by Flush once the Registry is closed.
var ErrClosed = errors.New("streams: registry closed")

type streamMeta struct {
	Label, Table, ViewType string
	KeySchema              []keyElem
	Created                int64
	Status                 string
	DisabledAt             int64
	LastMs                 int64
}

type shardMeta struct {
	Parent            string
	Created, ClosedAt int64
	Start, End, Last  uint64
	Count             int
	Trimmed           uint64
	// Hash is the range of partition-key hashes the shard takes; absent
	// in data files written before streams had several shards, whose
	// shards took every key.
	Hash *[2]uint64 `json:",omitempty"`
}

type recordDisk struct {
	N       string
	T       int64
	K, O, I wire.Item `json:",omitempty"`
	U       *Identity `json:",omitempty"`
	Z       int
}

func seqBytes(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// persister writes changed streams behind the hot path, batching every
// change of FlushDelay into one bbolt transaction.
type persister struct {
	r       *Registry
	mu      sync.Mutex
	queue   []*stream
	drops   []string
	closed  bool
	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}
	flushMu sync.Mutex
	lastErr error
}

func newPersister(r *Registry) *persister {
	p := &persister{r: r, kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go p.loop()
	return p
}

func (p *persister) enqueue(s *stream) {
	p.mu.Lock()
	p.queue = append(p.queue, s)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *persister) dropStream(arn string) {
	p.mu.Lock()
	p.drops = append(p.drops, arn)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *persister) loop() {
	defer close(p.stopped)
	for {
		select {
		case <-p.done:
			return
		case <-p.kick:
		}
		t := time.NewTimer(p.r.opts.FlushDelay)
		select {
		case <-p.done:
			t.Stop()
			return
		case <-t.C:
		}
		if err := p.flush(); err != nil && !errors.Is(err, ErrClosed) {
			slog.Error("ddblocal streams: persisting stream records", "err", err)
		}
	}
}

func (p *persister) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.done)
	<-p.stopped
	return p.flushOnce(true)
}

type shardSnap struct {
	id      string
	meta    []byte
	recs    []*record
	trimmed uint64
}

type streamSnap struct {
	arn     string
	meta    []byte
	shards  []shardSnap
	removed []string
}

// snapshot captures what must be written for one stream.
func snapshot(s *stream) streamSnap {
	s.dirty.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := streamSnap{arn: s.arn, meta: s.metaJSON(), removed: s.removed}
	s.removed = nil
	for _, sh := range s.shards {
		ss := shardSnap{id: sh.id, meta: sh.metaJSON(), trimmed: sh.trimmed}
		for i := len(sh.records) - 1; i >= 0 && sh.records[i].seq > sh.persist; i-- {
			ss.recs = sh.records[i:len(sh.records):len(sh.records)]
		}
		if n := len(ss.recs); n > 0 {
			sh.persist = ss.recs[n-1].seq
		}
		snap.shards = append(snap.shards, ss)
	}
	return snap
}

// flush writes every queued stream in one transaction; only the final
// flush of close runs once the persister is closed.
func (p *persister) flush() error { return p.flushOnce(false) }

func (p *persister) flushOnce(final bool) error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	p.mu.Lock()
	if p.closed && !final {
		p.mu.Unlock()
		return ErrClosed
	}
	queue, drops := p.queue, p.drops
	p.queue, p.drops = nil, nil
	p.mu.Unlock()
	if len(queue) == 0 && len(drops) == 0 {
		return p.lastErr
	}
	err := p.r.opts.DB.Update(func(tx *bbolt.Tx) error {
		// Snapshot inside the transaction: RecordTx writes records in
		// transactions of its own, so the state snapshotted here is never
		// older than what they stored.
		snaps := make([]streamSnap, 0, len(queue))
		for _, s := range queue {
			snaps = append(snaps, snapshot(s))
		}
		seq := p.r.seq.Load()
		root, err := tx.CreateBucketIfNotExists(rootBucket)
		if err != nil {
			return err
		}
		if err := root.Put(seqKey, seqBytes(seq)); err != nil {
			return err
		}
		all, err := root.CreateBucketIfNotExists(streamsBucket)
		if err != nil {
			return err
		}
		for _, sn := range snaps {
			if err := writeStream(all, sn); err != nil {
				return fmt.Errorf("stream %s: %w", sn.arn, err)
			}
		}
		for _, arn := range drops {
			if err := all.DeleteBucket([]byte(arn)); err != nil && !errors.Is(err, bbolt.ErrBucketNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("streams: persist: %w", err)
	}
	p.lastErr = err
	return err
}

func writeStream(all *bbolt.Bucket, sn streamSnap) error {
	b, err := all.CreateBucketIfNotExists([]byte(sn.arn))
	if err != nil {
		return err
	}
	if err := b.Put(metaKey, sn.meta); err != nil {
		return err
	}
	shards, err := b.CreateBucketIfNotExists(shardsBucket)
	if err != nil {
		return err
	}
	recs, err := b.CreateBucketIfNotExists(recordsBucket)
	if err != nil {
		return err
	}
	for _, id := range sn.removed {
		if err := shards.Delete([]byte(id)); err != nil {
			return err
		}
		if err := recs.DeleteBucket([]byte(id)); err != nil && !errors.Is(err, bbolt.ErrBucketNotFound) {
			return err
		}
	}
	for _, ss := range sn.shards {
		if err := shards.Put([]byte(ss.id), ss.meta); err != nil {
			return err
		}
		rb, err := recs.CreateBucketIfNotExists([]byte(ss.id))
		if err != nil {
			return err
		}
		if err := trimBucket(rb, ss.trimmed); err != nil {
			return err
		}
		for _, rec := range ss.recs {
			v, err := appendRecordJSON(nil, rec)
			if err != nil {
				return err
			}
			if err := rb.Put(seqBytes(rec.seq), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRecordTx writes one record to w, with the stream's meta and the
// meta of its shard and of every shard changed since it was last stored,
// so the stored stream is always the one the record was appended to (s.mu
// held).
func writeRecordTx(w wal.Writer, s *stream, sh *shard, rec *record, seq uint64) error {
	path, err := writeShardsTx(w, s, sh, seq)
	if err != nil {
		return err
	}
	return putRecord(w, append(path, recordsBucket, []byte(sh.id)), seqBytes(rec.seq), rec)
}

// writeShardsTx writes to w the sequence counter, the stream's meta, and
// the meta of shard also (nil: none) and of every shard changed since it
// was last stored (s.mu held). It returns the path of the stream's bucket.
func writeShardsTx(w wal.Writer, s *stream, also *shard, seq uint64) ([][]byte, error) {
	if err := w.Put([][]byte{rootBucket}, seqKey, seqBytes(seq)); err != nil {
		return nil, err
	}
	path := [][]byte{rootBucket, streamsBucket, []byte(s.arn)}
	if err := w.Put(path, metaKey, s.metaJSON()); err != nil {
		return nil, err
	}
	shards := [][]byte{rootBucket, streamsBucket, []byte(s.arn), shardsBucket}
	if also != nil && also.gen == also.saved {
		if err := w.Put(shards, []byte(also.id), also.metaJSON()); err != nil {
			return nil, err
		}
	}
	type stored struct {
		sh  *shard
		gen uint64
	}
	var done []stored
	for _, x := range s.shards {
		if x.gen == x.saved {
			continue
		}
		if err := w.Put(shards, []byte(x.id), x.metaJSON()); err != nil {
			return nil, err
		}
		done = append(done, stored{x, x.gen})
	}
	if len(done) > 0 {
		w.OnCommit(func() {
			s.mu.Lock()
			for _, d := range done {
				d.sh.saved = max(d.sh.saved, d.gen)
			}
			s.mu.Unlock()
		})
	}
	return path[:3:3], nil
}

// metaJSON returns the stream's stored meta (s.mu held), encoded again
// only when it changed since the last call (the bytes are not to be
// changed: they may be returned again).
func (s *stream) metaJSON() []byte {
	m := streamMeta{
		Label: s.label, Table: s.table, ViewType: s.viewType, KeySchema: s.keySchema,
		Created: unixNano(s.created), Status: s.status, DisabledAt: unixNano(s.disabledAt), LastMs: s.lastMs,
	}
	if s.metaEnc != nil && m.same(s.metaOf) {
		return s.metaEnc
	}
	b, _ := json.Marshal(m) // plain struct: never fails
	s.metaEnc, s.metaOf = b, m
	return b
}

// same reports whether m and o are equal.
func (m streamMeta) same(o streamMeta) bool {
	return m.Label == o.Label && m.Table == o.Table && m.ViewType == o.ViewType && slices.Equal(m.KeySchema, o.KeySchema) &&
		m.Created == o.Created && m.Status == o.Status && m.DisabledAt == o.DisabledAt && m.LastMs == o.LastMs
}

func (sh *shard) metaJSON() []byte {
	m, _ := json.Marshal(shardMeta{ // plain struct: never fails
		Parent: sh.parent, Created: unixNano(sh.created), ClosedAt: unixNano(sh.closedAt),
		Start: sh.start, End: sh.end, Last: sh.last, Count: sh.count, Trimmed: sh.trimmed, Hash: &[2]uint64{sh.lo, sh.hi},
	})
	return m
}

// trimBucket deletes the records up to and including sequence number upTo.
func trimBucket(b *bbolt.Bucket, upTo uint64) error {
	if upTo == 0 {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= upTo; k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
