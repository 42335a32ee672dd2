// Package streams is the DynamoDB Streams side of ddblocal: it records the
// changes the table engine reports into per-table streams made of shards, and
// serves the four DynamoDB Streams operations (ListStreams, DescribeStream,
// GetShardIterator, GetRecords) over them with the wire shapes of the real
// service: shard lineage and rollover, 24-hour retention with trimming,
// shard iterators that expire after 15 minutes.
//
// Records live in memory; when Options.DB is set they are also written behind
// to bbolt buckets of this package's own, so a Registry reopened on the same
// database serves the same streams, shards and sequence numbers.
package streams

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"

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
	DefaultShardMaxRecords = 10000
	DefaultShardMaxAge     = 4 * time.Hour
	DefaultRetention       = 24 * time.Hour
	DefaultIteratorTTL     = 15 * time.Minute
	DefaultRegion          = "us-east-1"
	DefaultAccountID       = "000000000000"
)

// Options configures a Registry. Zero fields take the defaults above.
type Options struct {
	DB              *bbolt.DB     // nil: in memory; else streams, shards and records persist in buckets of their own
	ShardMaxRecords int           // a shard closes and a child opens after this many records
	ShardMaxAge     time.Duration // ... or after this age
	Retention       time.Duration // records older than this are trimmed
	IteratorTTL     time.Duration // shard iterators expire after this
	Now             func() time.Time
	Region          string
	AccountID       string
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
	seq  atomic.Uint64 // last sequence number handed out (shard starts and records)

	mu      sync.RWMutex
	streams map[string]*stream // by ARN

	p *persister // nil without DB

	// visible is the highest record sequence number readers may see when
	// DB is set: records written by RecordTx become visible when their
	// transaction commits.
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
	shards     []*shard // creation order: parents before children
	lastMs     int64    // last shard-id timestamp, kept increasing
	dirty      atomic.Bool
	removed    []string // shard ids removed since the last flush
}

type shard struct {
	id       string
	parent   string
	created  time.Time
	start    uint64
	end      uint64 // 0 while open
	closedAt time.Time
	last     uint64 // last record sequence number appended (0: none)
	count    int    // records ever appended
	trimmed  uint64 // highest sequence number trimmed away (0: none)
	records  []*record
	dead     int    // trimmed records still held by the records array
	persist  uint64 // highest record sequence number persisted
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
// being an ISO-8601 timestamp with milliseconds.
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
	s := &stream{arn: arn, label: label, table: table, viewType: viewType, created: now, status: StatusEnabled}
	for i, a := range keyAttrs {
		t := "HASH"
		if i > 0 {
			t = "RANGE"
		}
		s.keySchema = append(s.keySchema, keyElem{a, t})
	}
	s.openShard(r, now, "")
	r.streams[arn] = s
	r.markDirty(s)
	return arn, label
}

// Disable stops recording into a stream. It stays readable (StreamStatus
// DISABLED, its shards closed) until its records pass retention.
func (r *Registry) Disable(arn string) {
	s := r.lookup(arn)
	if s == nil {
		return
	}
	now := r.now()
	s.mu.Lock()
	if s.status == StatusEnabled {
		s.status = StatusDisabled
		s.disabledAt = now
		if sh := s.open(); sh != nil {
			sh.close(now)
		}
	}
	s.mu.Unlock()
	r.markDirty(s)
}

// Record appends one change to a stream; changes to a disabled or unknown
// stream are dropped. The caller serialises writes to one item, so an item's
// records arrive in write order. With Options.DB set, use RecordTx instead:
// a record appended by Record is only written behind.
func (r *Registry) Record(arn string, c Change) {
	s, rec := r.prepare(arn, c)
	if s == nil {
		return
	}
	s.mu.Lock()
	_, _, ok := s.appendLocked(r, rec)
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

// prepare returns the stream of arn (nil: unknown) and the record of c,
// its sequence number not yet assigned.
func (r *Registry) prepare(arn string, c Change) (*stream, *record) {
	r.mu.RLock()
	s := r.streams[arn] // a stream past its retention is disabled: dropped by appendLocked
	r.mu.RUnlock()
	if s == nil {
		return nil, nil
	}
	rec := &record{eventName: c.EventName, at: c.At, identity: c.UserIdentity}
	clone := abi.CloneItem
	if r.opts.NoCopy {
		clone = func(it abi.Item) abi.Item { return it }
	}
	view := s.viewType // immutable after Enable
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
	return s, rec
}

// appendLocked assigns rec its sequence number and appends it to the open
// shard, rolling the shard over when it is full or old (s.mu held). It
// returns the shard written to, the shard closed by a rollover (nil: none),
// and false when the stream is not enabled (the record is dropped).
func (s *stream) appendLocked(r *Registry, rec *record) (sh, closed *shard, ok bool) {
	if s.status != StatusEnabled {
		return nil, nil, false
	}
	now := r.now()
	sh = s.open()
	if sh.count >= r.opts.ShardMaxRecords || now.Sub(sh.created) >= r.opts.ShardMaxAge {
		sh.close(now)
		closed = sh
		sh = s.openShard(r, now, sh.id)
		s.trim(r, now)
	}
	rec.seq = r.seq.Add(1)
	sh.records = append(sh.records, rec)
	sh.last = rec.seq
	sh.count++
	return sh, closed, true
}

// RecordTx appends one change to a stream like Record and writes the record,
// with the stream and shard state it changes, in tx: the record is durable
// exactly when tx commits, so a caller that writes the item in the same tx
// can never lose the record nor store it twice. Readers see the record once
// tx has committed. If tx does not commit, the registry holds a record that
// was never stored: the caller must stop writing and reopen the database.
// Without Options.DB, RecordTx is Record (tx is ignored).
func (r *Registry) RecordTx(tx *bbolt.Tx, arn string, c Change) error {
	if r.opts.DB == nil {
		r.Record(arn, c)
		return nil
	}
	s, rec := r.prepare(arn, c)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, closed, ok := s.appendLocked(r, rec)
	if !ok {
		return nil
	}
	if err := writeRecordTx(tx, s, sh, rec, r.seq.Load()); err != nil {
		return fmt.Errorf("streams: record in %s: %w", arn, err)
	}
	sh.persist = max(sh.persist, rec.seq)
	seq := rec.seq
	tx.OnCommit(func() { r.publish(seq) })
	if closed != nil {
		r.markDirty(s) // trimming of the rollover is written behind
	}
	return nil
}

// publish makes records up to seq visible to readers (persistent registries
// only show committed records).
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

// open returns the stream's open shard, or nil (s.mu held).
func (s *stream) open() *shard {
	if n := len(s.shards); n > 0 && s.shards[n-1].end == 0 {
		return s.shards[n-1]
	}
	return nil
}

// openShard starts a new shard (s.mu held, or s not yet shared). Its
// starting sequence number is taken from the registry's counter, so every
// record of the shard has a greater one.
func (s *stream) openShard(r *Registry, now time.Time, parent string) *shard {
	ms := now.UnixMilli()
	if ms <= s.lastMs {
		ms = s.lastMs + 1
	}
	s.lastMs = ms
	sh := &shard{
		id:      fmt.Sprintf("shardId-%020d-%08x", ms, rand.Uint32()),
		parent:  parent,
		created: now,
		start:   r.seq.Add(1),
	}
	s.shards = append(s.shards, sh)
	return sh
}

// close ends a shard: its EndingSequenceNumber is its last record's, or its
// start when it never got one.
func (sh *shard) close(now time.Time) {
	sh.end = sh.last
	if sh.end == 0 {
		sh.end = sh.start
	}
	sh.closedAt = now
}

// maintain rolls an aged open shard over and trims expired records (s.mu
// held for writing). It reports whether anything changed.
func (s *stream) maintain(r *Registry, now time.Time) bool {
	changed := false
	if sh := s.open(); sh != nil && s.status == StatusEnabled && now.Sub(sh.created) >= r.opts.ShardMaxAge {
		sh.close(now)
		s.openShard(r, now, sh.id)
		changed = true
	}
	return s.trim(r, now) || changed
}

// trim drops records older than the retention period and closed shards
// that are empty and were closed longer than the retention period ago.
func (s *stream) trim(r *Registry, now time.Time) bool {
	cutoff := now.Add(-r.opts.Retention)
	changed := false
	kept := s.shards[:0]
	for _, sh := range s.shards {
		n := 0
		for n < len(sh.records) && sh.records[n].at.Before(cutoff) {
			n++
		}
		if n > 0 {
			sh.trimmed = sh.records[n-1].seq
			// Readers may hold sub-slices of the array: never overwrite it,
			// re-slice, and copy once the dead prefix outgrows the rest.
			sh.records = sh.records[n:]
			sh.dead += n
			if sh.dead > len(sh.records)+64 {
				sh.records = append([]*record(nil), sh.records...)
				sh.dead = 0
			}
			changed = true
		}
		if sh.end != 0 && len(sh.records) == 0 && sh.closedAt.Before(cutoff) {
			s.removed = append(s.removed, sh.id)
			changed = true
			continue
		}
		kept = append(kept, sh)
	}
	for i := len(kept); i < len(s.shards); i++ {
		s.shards[i] = nil
	}
	s.shards = kept
	return changed
}

// shard returns the shard with the given id, or nil (s.mu held).
func (s *stream) shard(id string) *shard {
	for _, sh := range s.shards {
		if sh.id == id {
			return sh
		}
	}
	return nil
}
