// Package streams is the DynamoDB Streams side of ddblocal: it records the
// changes the table engine reports into per-table streams made of shards, and
// serves the four DynamoDB Streams operations (ListStreams, DescribeStream,
// GetShardIterator, GetRecords) over them with the wire shapes of the real
// service: several open shards per stream, each taking the partition keys
// of one range of hash values (so an item's records stay in one shard, in
// order), shard rollover and partition splits with their lineage, 24-hour
// retention with trimming, shard iterators that expire after 15 minutes.
//
// Records live in memory; when Options.DB is set they are also stored in
// bbolt buckets of this package's own, so a Registry reopened on the same
// database serves the same streams, shards and sequence numbers.
package streams

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"

	"github.com/dynafold/dynafold/abi"
)

// Stream view types, stream statuses and event names of the DynamoDB Streams API.
const (
	ViewKeysOnly        = "KEYS_ONLY"
	ViewNewImage        = "NEW_IMAGE"
	ViewOldImage        = "OLD_IMAGE"
	ViewNewAndOldImages = "NEW_AND_OLD_IMAGES"

	StatusEnabled  = "ENABLED"
	StatusDisabled = "DISABLED"

	EventInsert = "INSERT"
	EventModify = "MODIFY"
	EventRemove = "REMOVE"
)

// Defaults applied to zero Options fields.
const (
	DefaultShards          = 4
	DefaultMaxShards       = 64
	DefaultShardMaxRecords = 10000
	DefaultShardMaxAge     = 4 * time.Hour
	DefaultRetention       = 24 * time.Hour
	DefaultIteratorTTL     = 15 * time.Minute
	DefaultRegion          = "us-east-1"
	DefaultAccountID       = "000000000000"
)

// Options configures a Registry. Zero fields take the defaults above.
type Options struct {
	// DB is the store (a *bbolt.DB, or ddblocal's log in front of one);
	// nil: in memory; else streams, shards and records persist in
	// buckets of their own.
	DB wal.DB
	// Shards is the number of open shards a new stream starts with, each
	// taking an equal range of partition-key hashes (default 4).
	Shards int
	// ShardMaxRecords closes a shard after this many records; a child with
	// the same key range takes its partition on.
	ShardMaxRecords int
	// ShardMaxAge closes a shard at this age, the same way.
	ShardMaxAge time.Duration
	// SplitAfterRecords, when positive, splits a shard that has taken this
	// many records: it closes and two children open, each taking half of
	// its key range (0: shards never split by themselves; see Split).
	SplitAfterRecords int
	// MaxShards stops automatic splits while a stream has this many open
	// shards (default 64); Split is not bounded by it.
	MaxShards   int
	Retention   time.Duration // records older than this are trimmed
	IteratorTTL time.Duration // shard iterators expire after this
	Now         func() time.Time
	Region      string
	AccountID   string
	// FlushDelay is how long the write-behind persister waits to batch
	// records into one bbolt transaction (0: 10ms). Only with DB.
	FlushDelay time.Duration
	// NoCopy makes Record keep the Change's items instead of deep copies:
	// faster, but the caller must never modify an item it passed to Record.
	NoCopy bool
	// GetRecordsPerShardPerSecond, when positive, makes GetRecords answer
	// LimitExceededException past that many calls per second on one shard,
	// as DynamoDB throttles readers (0: no limit).
	GetRecordsPerShardPerSecond int
}

// Identity is the userIdentity of a stream record: set for deletions made by
// the TTL process ({Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}).
type Identity struct{ Type, PrincipalID string }

// Change is one modification of one item, as the table engine reports it.
// Record copies the items it keeps, unless Options.NoCopy is set.
type Change struct {
	EventName                string // "INSERT", "MODIFY", "REMOVE"
	Keys, OldImage, NewImage abi.Item
	UserIdentity             *Identity
	At                       time.Time // zero: Now()
}

// Registry holds every stream of a ddblocal server. It is safe for
// concurrent use.
type Registry struct {
	opts Options
	seq  atomic.Uint64 // last sequence number handed out (shard starts, records, shard changes)

	mu      sync.RWMutex
	streams map[string]*stream // by ARN

	p *persister // nil without DB

	// visible is the highest sequence number readers may see when DB is
	// set: records written by RecordTx, and shards opened or closed in a
	// transaction, become visible when their transaction commits.
	visible atomic.Uint64

	rateMu sync.Mutex
	rate   map[string]rateWindow // by ARN and shard id
}

type rateWindow struct {
	second int64
	calls  int
}

type keyElem struct{ Name, Type string }

type stream struct {
	mu         sync.RWMutex
	arn        string
	label      string
	table      string
	viewType   string
	keySchema  []keyElem
	created    time.Time
	status     string
	disabledAt time.Time
	shards     []*shard          // creation order: parents before children, ids increasing
	byID       map[string]*shard // the shards, by id
	open       []*shard          // the open shards, by hash range: together they cover every hash
	lastMs     int64             // last shard-id timestamp, kept increasing
	// metaEnc is the stream's stored meta as metaJSON last encoded it and
	// metaOf what it encoded (s.mu held): every record's transaction
	// stores the meta, which changes only with a shard's creation or the
	// stream's status.
	metaEnc []byte
	metaOf  streamMeta
	dirty   atomic.Bool
	removed []string // shard ids removed since the last flush
	// nextRoll is the earliest time an open shard reaches ShardMaxAge;
	// nextTrim the earliest time trim can drop anything (Unix nanoseconds,
	// math.MaxInt64: never). Reads check them before taking the write lock.
	nextRoll, nextTrim int64
}

// record is one stream record; immutable once appended.
type record struct {
	seq       uint64
	eventName string
	at        time.Time
	keys      abi.Item
	oldImage  abi.Item
	newImage  abi.Item
	identity  *Identity
	size      int
}

// NewRegistry returns a Registry; with opts.DB set it loads the streams
// persisted there and starts the write-behind persister.
func NewRegistry(opts Options) (*Registry, error) {
	if opts.Shards <= 0 {
		opts.Shards = DefaultShards
	}
	if opts.MaxShards <= 0 {
		opts.MaxShards = DefaultMaxShards
	}
	if opts.ShardMaxRecords <= 0 {
		opts.ShardMaxRecords = DefaultShardMaxRecords
	}
	if opts.ShardMaxAge <= 0 {
		opts.ShardMaxAge = DefaultShardMaxAge
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.IteratorTTL <= 0 {
		opts.IteratorTTL = DefaultIteratorTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.AccountID == "" {
		opts.AccountID = DefaultAccountID
	}
	if opts.FlushDelay <= 0 {
		opts.FlushDelay = 10 * time.Millisecond
	}
	r := &Registry{opts: opts, streams: map[string]*stream{}}
	if opts.DB != nil {
		if err := r.load(); err != nil {
			return nil, fmt.Errorf("streams: load: %w", err)
		}
		r.p = newPersister(r)
	}
	return r, nil
}

// Close flushes what is not yet persisted and stops the persister; call it
// before closing Options.DB. The Registry must not be used afterwards.
func (r *Registry) Close() error {
	if r.p == nil {
		return nil
	}
	return r.p.close()
}

// Flush writes every pending change to the database now (a no-op without DB).
func (r *Registry) Flush() error {
	if r.p == nil {
		return nil
	}
	return r.p.flush()
}

func (r *Registry) now() time.Time { return r.opts.Now() }

// Enable creates a new stream for a table and returns its ARN and label.
// Each enabling gets a new ARN:
// arn:aws:dynamodb:<region>:<account>:table/<table>/stream/<label>, the label
// being an ISO-8601 timestamp with milliseconds. The stream starts with
// Options.Shards open shards.
func (r *Registry) Enable(table, viewType string, keyAttrs []string) (arn, label string) {
	now := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	at := now.Truncate(time.Millisecond)
	for {
		label = at.Format("2006-01-02T15:04:05.000")
		arn = fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s/stream/%s", r.opts.Region, r.opts.AccountID, table, label)
		if _, taken := r.streams[arn]; !taken {
			break
		}
		at = at.Add(time.Millisecond)
	}
	s := &stream{arn: arn, label: label, table: table, viewType: viewType, created: now, status: StatusEnabled,
		byID: map[string]*shard{}, nextRoll: math.MaxInt64, nextTrim: math.MaxInt64}
	for i, a := range keyAttrs {
		t := "HASH"
		if i > 0 {
			t = "RANGE"
		}
		s.keySchema = append(s.keySchema, keyElem{a, t})
	}
	for _, rg := range hashRanges(r.opts.Shards) {
		s.open = append(s.open, s.openShard(r, now, "", rg[0], rg[1]))
	}
	s.noteRoll(r)
	r.streams[arn] = s
	r.markDirty(s)
	return arn, label
}

// Disable stops recording into a stream. It stays readable (StreamStatus
// DISABLED, its shards closed) until its records pass retention. With DB,
// the change is stored before Disable returns.
func (r *Registry) Disable(arn string) error {
	s := r.lookup(arn)
	if s == nil {
		return nil
	}
	now := r.now()
	err := r.restructure(s, func() []*shard {
		if s.status != StatusEnabled {
			return nil
		}
		s.status = StatusDisabled
		s.disabledAt = now
		closed := s.open
		for _, sh := range closed {
			sh.close(s, r, now)
		}
		s.open = nil
		s.nextRoll = math.MaxInt64
		if len(closed) == 0 {
			return []*shard{} // the status changed: store it all the same
		}
		return closed
	})
	r.markDirty(s)
	return err
}

// Record appends one change to a stream; changes to a disabled or unknown
// stream are dropped. The caller serialises writes to one item, so an item's
// records arrive in write order. With Options.DB set, use RecordTx instead:
// a record appended by Record is only written behind.
func (r *Registry) Record(arn string, c Change) {
	s, rec, h := r.prepare(arn, c)
	if s == nil {
		return
	}
	s.mu.Lock()
	_, _, ok := s.appendLocked(r, rec, h)
	s.mu.Unlock()
	if ok {
		r.publish(rec.seq)
		r.markDirty(s)
	}
}

// visibleUpTo is the highest sequence number readers may see.
func (r *Registry) visibleUpTo() uint64 {
	if r.opts.DB == nil {
		return math.MaxUint64
	}
	return r.visible.Load()
}

// prepare returns the stream of arn (nil: unknown), the record of c, its
// sequence number not yet assigned, and the hash of its partition key.
func (r *Registry) prepare(arn string, c Change) (*stream, *record, uint64) {
	r.mu.RLock()
	s := r.streams[arn] // a stream past its retention is disabled: dropped by appendLocked
	r.mu.RUnlock()
	if s == nil {
		return nil, nil, 0
	}
	rec := &record{eventName: c.EventName, at: c.At, identity: c.UserIdentity}
	clone := abi.CloneItem
	if r.opts.NoCopy {
		clone = func(it abi.Item) abi.Item { return it }
	}
	view := s.viewType // immutable after Enable, as keySchema
	var h uint64
	if len(s.keySchema) > 0 {
		h = keyHash(c.Keys[s.keySchema[0].Name])
	}
	rec.keys = clone(c.Keys)
	rec.size = max(1, itemSize(c.Keys)) // SizeBytes is at least 1
	if (view == ViewNewImage || view == ViewNewAndOldImages) && c.NewImage != nil {
		rec.newImage = clone(c.NewImage)
		rec.size += itemSize(c.NewImage)
	}
	if (view == ViewOldImage || view == ViewNewAndOldImages) && c.OldImage != nil {
		rec.oldImage = clone(c.OldImage)
		rec.size += itemSize(c.OldImage)
	}
	if c.UserIdentity != nil {
		id := *c.UserIdentity
		rec.identity = &id
	}
	if rec.at.IsZero() {
		rec.at = r.now()
	}
	return s, rec, h
}

// appendLocked assigns rec its sequence number and appends it to the open
// shard whose key range holds h, first rolling that shard over when it is
// full or old, or splitting it when it has taken Options.SplitAfterRecords
// (s.mu held). It returns the shard written to, the shards a rollover or
// split closed or opened (nil: none; they show once rec does), and false
// when the stream is not enabled (the record is dropped).
func (s *stream) appendLocked(r *Registry, rec *record, h uint64) (sh *shard, changed []*shard, ok bool) {
	if s.status != StatusEnabled {
		return nil, nil, false
	}
	now := r.now()
	i := s.route(h)
	sh = s.open[i]
	switch {
	case r.opts.SplitAfterRecords > 0 && sh.count >= r.opts.SplitAfterRecords && len(s.open) < r.opts.MaxShards && sh.hi > sh.lo:
		changed = s.split(r, now, i)
	case sh.count >= r.opts.ShardMaxRecords || now.Sub(sh.created) >= r.opts.ShardMaxAge:
		changed = s.roll(r, now, i)
	}
	if changed != nil {
		sh = s.open[s.route(h)]
		s.trim(r, now)
	}
	rec.seq = r.seq.Add(1)
	for _, x := range changed {
		x.show(rec.seq)
	}
	sh.records = append(sh.records, rec)
	sh.last = rec.seq
	sh.count++
	if t := rec.at.Add(r.opts.Retention).UnixNano(); t < s.nextTrim {
		s.nextTrim = t
	}
	return sh, changed, true
}

// RecordTx appends one change to a stream like Record and writes the record,
// with the stream and shard state it changes, in tx: the record is durable
// exactly when tx commits, so a caller that writes the item in the same tx
// can never lose the record nor store it twice. Readers see the record, and
// a rollover or split it caused, once tx has committed. If tx does not
// commit, the registry holds a record that was never stored: the caller
// must stop writing and reopen the database. Without Options.DB, RecordTx
// is Record (tx is ignored).
func (r *Registry) RecordTx(tx *bbolt.Tx, arn string, c Change) error {
	if r.opts.DB == nil {
		r.Record(arn, c)
		return nil
	}
	return r.RecordTo(wal.Bolt(tx), arn, c)
}

// RecordTo is RecordTx writing to w, the caller's store transaction (a
// bbolt transaction, or a batch of ddblocal's log): readers see the record
// once w's changes are durable (w's OnCommit).
func (r *Registry) RecordTo(w wal.Writer, arn string, c Change) error {
	if r.opts.DB == nil {
		r.Record(arn, c)
		return nil
	}
	s, rec, h := r.prepare(arn, c)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, changed, ok := s.appendLocked(r, rec, h)
	if !ok {
		return nil
	}
	if err := writeRecordTx(w, s, sh, rec, r.seq.Load()); err != nil {
		return fmt.Errorf("streams: record in %s: %w", arn, err)
	}
	sh.persist = max(sh.persist, rec.seq)
	seq := rec.seq
	w.OnCommit(func() { r.publish(seq) })
	if changed != nil {
		r.markDirty(s) // trimming of the rollover is written behind
	}
	return nil
}

// publish makes sequence numbers up to seq visible to readers (persistent
// registries only show what is committed).
func (r *Registry) publish(seq uint64) {
	for {
		cur := r.visible.Load()
		if cur >= seq || r.visible.CompareAndSwap(cur, seq) {
			return
		}
	}
}

func (r *Registry) markDirty(s *stream) {
	if r.p != nil && s.dirty.CompareAndSwap(false, true) {
		r.p.enqueue(s)
	}
}

// lookup returns the stream of an ARN, or nil; it drops streams whose
// retention has passed since they were disabled.
func (r *Registry) lookup(arn string) *stream {
	r.mu.RLock()
	s := r.streams[arn]
	r.mu.RUnlock()
	if s == nil {
		return nil
	}
	if r.expired(s) {
		r.drop(s)
		return nil
	}
	return s
}

func (r *Registry) expired(s *stream) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.status == StatusDisabled && r.now().Sub(s.disabledAt) > r.opts.Retention
}

func (r *Registry) drop(s *stream) {
	r.mu.Lock()
	if r.streams[s.arn] == s {
		delete(r.streams, s.arn)
	}
	r.mu.Unlock()
	if r.p != nil {
		r.p.dropStream(s.arn)
	}
}

// sortedStreams returns the live streams ordered by ARN.
func (r *Registry) sortedStreams() []*stream {
	r.mu.RLock()
	all := make([]*stream, 0, len(r.streams))
	for _, s := range r.streams {
		all = append(all, s)
	}
	r.mu.RUnlock()
	out := all[:0]
	for _, s := range all {
		if r.expired(s) {
			r.drop(s)
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].arn < out[j].arn })
	return out
}
