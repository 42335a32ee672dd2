package kinesis

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.etcd.io/bbolt"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// Bucket layout, all under rootBucket:
//
//	seq                              last counter handed out (8 bytes, big endian)
//	streams/<name>/meta              the stream (JSON)
//	streams/<name>/shards/<idx>      a shard (JSON; idx 8 bytes, big endian)
//	streams/<name>/records/<idx>/<n> a record (JSON)
//	streams/<name>/held/<idx>        a record held back by the reordering fault (JSON)
var (
	rootBucket    = []byte("ddblocal.kinesis")
	seqKey        = []byte("seq")
	streamsBucket = []byte("streams")
	metaKey       = []byte("meta")
	shardsBucket  = []byte("shards")
	recordsBucket = []byte("records")
	heldBucket    = []byte("held")
)

// seqRestartGap is how far counters jump when a registry reopens a data
// file: counters taken by writes whose transaction never committed are
// never reused.
const seqRestartGap = 1 << 20

type streamMeta struct {
	ARN       string
	Created   int64
	Mode      string
	Retention int64 // ns
}

type shardMeta struct {
	Parent, Adjacent string `json:",omitempty"`
	Lo, Hi           string
	Created, Closed  int64
	Start, End       uint64
	Trimmed          uint64
	Gone             bool `json:",omitempty"`
}

type recordDisk struct {
	T int64
	K string
	D []byte
}

func be(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func nano(t time.Time) int64 {
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

// sink is where a stream's changes are written: a store transaction (a
// bbolt one, or a batch of ddblocal's log) and the path of the stream's
// bucket in it. tx is the bbolt transaction when there is one (trimming
// reads the stored records); nil for a batch of the log, which only
// appends records.
type sink struct {
	w    wal.Writer
	tx   *bbolt.Tx
	path [][]byte // rootBucket, streamsBucket, name
}

// at returns the path of a bucket under the stream's.
func (k *sink) at(names ...[]byte) [][]byte {
	return append(k.path[:len(k.path):len(k.path)], names...)
}

// streamSink returns the sink of a stream in w (tx: w's bbolt
// transaction, or nil) and stores the counter.
func (r *Registry) streamSink(w wal.Writer, tx *bbolt.Tx, name string) (*sink, error) {
	if err := w.Put([][]byte{rootBucket}, seqKey, be(r.seq.Load())); err != nil {
		return nil, err
	}
	return &sink{w: w, tx: tx, path: [][]byte{rootBucket, streamsBucket, []byte(name)}}, nil
}

func writeStreamMeta(b *sink, s *stream) error {
	v, _ := json.Marshal(streamMeta{ARN: s.arn, Created: nano(s.created), Mode: s.mode, Retention: int64(s.retention)})
	return b.w.Put(b.path, metaKey, v)
}

func writeShard(b *sink, sh *shard) error {
	v, _ := json.Marshal(shardMeta{Parent: sh.parent, Adjacent: sh.adjacent, Lo: sh.lo.String(), Hi: sh.hi.String(),
		Created: nano(sh.created), Closed: nano(sh.closed), Start: sh.start, End: sh.end, Trimmed: sh.trimmed, Gone: sh.gone})
	return b.w.Put(b.at(shardsBucket), be(uint64(sh.idx)), v)
}

func writeRecord(b *sink, sh *shard, rec *record) error {
	v, _ := json.Marshal(recordDisk{T: rec.at.UnixNano(), K: rec.pk, D: rec.data})
	return b.w.Put(b.at(recordsBucket, be(uint64(sh.idx))), be(rec.n), v)
}

// writeHeld stores (or, with rec nil, deletes) the record a shard holds back.
func writeHeld(b *sink, sh *shard, rec *record) error {
	if rec == nil {
		return b.w.Delete(b.at(heldBucket), be(uint64(sh.idx)))
	}
	v, _ := json.Marshal(recordDisk{T: rec.at.UnixNano(), K: rec.pk, D: rec.data})
	return b.w.Put(b.at(heldBucket), be(uint64(sh.idx)), v)
}

// deleteRecords deletes a shard's records up to counter upTo; b must be
// a bbolt transaction's sink.
func deleteRecords(b *sink, sh *shard, upTo uint64) error {
	if b.tx == nil {
		return errors.New("kinesis: trimming outside a store transaction")
	}
	var rb *bbolt.Bucket
	for i, p := range b.at(recordsBucket, be(uint64(sh.idx))) {
		if i == 0 {
			rb = b.tx.Bucket(p)
		} else {
			rb = rb.Bucket(p)
		}
		if rb == nil {
			return nil
		}
	}
	var keys [][]byte
	c := rb.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= upTo; k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.w.Delete(b.at(recordsBucket, be(uint64(sh.idx))), k); err != nil {
			return err
		}
	}
	return nil
}

func dropStreamBucket(tx *bbolt.Tx, name string) error {
	root := tx.Bucket(rootBucket)
	if root == nil {
		return nil
	}
	all := root.Bucket(streamsBucket)
	if all == nil {
		return nil
	}
	if err := all.DeleteBucket([]byte(name)); err != nil && !errors.Is(err, bbolt.ErrBucketNotFound) {
		return err
	}
	return nil
}

// load reads every stored stream.
func (r *Registry) load() error {
	top := uint64(0)
	err := r.opts.DB.View(func(tx *bbolt.Tx) error {
		root := tx.Bucket(rootBucket)
		if root == nil {
			return nil
		}
		if v := root.Get(seqKey); len(v) == 8 {
			top = binary.BigEndian.Uint64(v)
		}
		all := root.Bucket(streamsBucket)
		if all == nil {
			return nil
		}
		return all.ForEachBucket(func(name []byte) error {
			s, n, err := loadStream(string(name), all.Bucket(name))
			if err != nil {
				return fmt.Errorf("kinesis stream %s: %w", name, err)
			}
			top = max(top, n)
			r.streams[s.name] = s
			return nil
		})
	})
	if err != nil {
		return err
	}
	if top > 0 {
		top += seqRestartGap
	}
	r.seq.Store(top)
	r.visible.Store(top)
	return r.opts.DB.Update(func(tx *bbolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(rootBucket)
		if err != nil {
			return err
		}
		return root.Put(seqKey, be(top))
	})
}

func loadStream(name string, b *bbolt.Bucket) (*stream, uint64, error) {
	var m streamMeta
	if err := json.Unmarshal(b.Get(metaKey), &m); err != nil {
		return nil, 0, fmt.Errorf("meta: %w", err)
	}
	s := &stream{name: name, arn: m.ARN, created: fromNano(m.Created), mode: m.Mode, retention: time.Duration(m.Retention)}
	top := uint64(0)
	shards := b.Bucket(shardsBucket)
	if shards == nil {
		return nil, 0, errors.New("no shards stored")
	}
	recs, held := b.Bucket(recordsBucket), b.Bucket(heldBucket)
	err := shards.ForEach(func(k, v []byte) error {
		var sm shardMeta
		if err := json.Unmarshal(v, &sm); err != nil {
			return fmt.Errorf("shard %x: %w", k, err)
		}
		lo, ok1 := parseU128(sm.Lo)
		hi, ok2 := parseU128(sm.Hi)
		if !ok1 || !ok2 {
			return fmt.Errorf("shard %x: hash key range %q..%q", k, sm.Lo, sm.Hi)
		}
		sh := &shard{idx: int(binary.BigEndian.Uint64(k)), parent: sm.Parent, adjacent: sm.Adjacent, lo: lo, hi: hi,
			created: fromNano(sm.Created), closed: fromNano(sm.Closed), start: sm.Start, end: sm.End, trimmed: sm.Trimmed, gone: sm.Gone}
		top = max(top, sh.start, sh.end)
		if recs != nil {
			if rb := recs.Bucket(k); rb != nil {
				if err := rb.ForEach(func(rk, rv []byte) error {
					var d recordDisk
					if err := json.Unmarshal(rv, &d); err != nil {
						return fmt.Errorf("record: %w", err)
					}
					if n := binary.BigEndian.Uint64(rk); n > sh.trimmed {
						sh.records = append(sh.records, &record{n: n, at: time.Unix(0, d.T), pk: d.K, data: d.D})
						top = max(top, n)
					}
					return nil
				}); err != nil {
					return err
				}
			}
		}
		if held != nil {
			if v := held.Get(k); v != nil {
				var d recordDisk
				if err := json.Unmarshal(v, &d); err != nil {
					return fmt.Errorf("held record: %w", err)
				}
				sh.held = &record{at: time.Unix(0, d.T), pk: d.K, data: d.D}
			}
		}
		s.shards = append(s.shards, sh)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(s.shards, func(i, j int) bool { return s.shards[i].idx < s.shards[j].idx })
	for i, sh := range s.shards {
		if sh.idx != i {
			return nil, 0, fmt.Errorf("shard %d missing", i)
		}
	}
	s.noteTrim()
	return s, top, nil
}
