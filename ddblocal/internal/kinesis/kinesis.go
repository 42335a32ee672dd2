// Package kinesis is the Kinesis Data Streams side of ddblocal: streams of
// shards that each take a range of 128-bit hash keys (the MD5 of a
// record's partition key), records with sequence numbers increasing within
// a shard, splits and merges with their lineage, retention, shard
// iterators that expire, and the Kinesis API operations (JSON 1.1) over
// them with the service's wire shapes and errors.
//
// Records are kept in memory; with Options.DB every change is also written
// to bbolt buckets of this package's own before it is acknowledged, and
// RecordTx writes a record in a transaction of the caller's (ddblocal's
// item writes), so a record is durable exactly when the item write is.
// Readers see a record, and a shard opened or closed, only once it is
// committed: a crash never takes back what a reader saw.
package kinesis

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// Defaults applied to zero Options fields.
const (
	DefaultOnDemandShards = 4
	DefaultRetention      = 24 * time.Hour
	DefaultIteratorTTL    = 5 * time.Minute
	DefaultRegion         = "us-east-1"
	DefaultAccountID      = "000000000000"
)

// Options configures a Registry; zero fields take the defaults above.
type Options struct {
	// DB is the store (a *bbolt.DB, or ddblocal's log in front of one);
	// nil: in memory.
	DB wal.DB
	// OnDemandShards is how many shards an ON_DEMAND stream (or one
	// created without a ShardCount) starts with; Kinesis starts on-demand
	// streams with 4.
	OnDemandShards int
	// Retention is a new stream's retention period (Kinesis: 24 hours).
	Retention time.Duration
	// IteratorTTL expires shard iterators (Kinesis: 5 minutes).
	IteratorTTL time.Duration
	// ReadsPerShardPerSecond, when positive, makes GetRecords answer
	// ProvisionedThroughputExceededException past that many calls per
	// second on one shard (Kinesis allows 5); 0: no limit.
	ReadsPerShardPerSecond int
	Now                    func() time.Time
	Region, AccountID      string
}

// Faults makes records written through Record and RecordTx (DynamoDB's
// change records) arrive as Kinesis warns they may: DuplicateRate is the
// probability that a record is written twice; ReorderRate the probability
// that a record is held back and written after the next record of its
// shard (or when its shard is next read or restructured). Seed makes the
// draws repeatable. PutRecord and PutRecords are never affected.
type Faults struct {
	DuplicateRate float64
	ReorderRate   float64
	Seed          uint64
}

// ErrFailed is returned once a store transaction failed after records were
// taken in memory: memory and the data file may disagree, so the registry
// refuses every later write until it is reopened.
var ErrFailed = errors.New("kinesis: an earlier store transaction failed; restart on the data file to resume writes")

// Registry holds every Kinesis stream of a server. It is safe for
// concurrent use.
type Registry struct {
	opts Options
	seq  atomic.Uint64 // last sequence counter handed out
	// visible is the highest counter readers may see with DB: a record or
	// a shard change shows once its transaction has committed.
	visible atomic.Uint64
	failed  atomic.Bool

	mu      sync.RWMutex
	streams map[string]*stream // by name

	rateMu sync.Mutex
	rate   map[string]rateWindow

	faultMu sync.Mutex
	faults  Faults
	rng     *rand.Rand
}

type rateWindow struct {
	second int64
	calls  int
}

// Stream statuses and modes.
const (
	statusActive = "ACTIVE"
	modeOnDemand = "ON_DEMAND"
	modeProv     = "PROVISIONED"
)

type stream struct {
	mu        sync.RWMutex
	name, arn string
	created   time.Time
	mode      string
	retention time.Duration
	shards    []*shard // by index: shard i has id shardID(i)
	nextTrim  int64    // Unix ns of the earliest record or shard past retention (MaxInt64: none)
	deleted   bool
}

type shard struct {
	idx              int
	parent, adjacent string // parent shard ids ("": none)
	lo, hi           u128   // hash keys taken, inclusive
	created, closed  time.Time
	start            uint64 // counter of its StartingSequenceNumber
	end              uint64 // counter of its EndingSequenceNumber; 0 while open
	records          []*record
	trimmed          uint64  // highest counter trimmed (0: none)
	held             *record // a record held back by Faults.ReorderRate (no counter yet)
	gone             bool    // closed, empty and past retention: no longer listed
}

// record is one Kinesis record; immutable once appended.
type record struct {
	n    uint64 // counter (0 while held)
	at   time.Time
	pk   string
	data []byte
}

func (sh *shard) open() bool { return sh.end == 0 }

// NewRegistry returns a Registry, loading the streams stored in opts.DB.
func NewRegistry(opts Options) (*Registry, error) {
	if opts.OnDemandShards <= 0 {
		opts.OnDemandShards = DefaultOnDemandShards
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
	r := &Registry{opts: opts, streams: map[string]*stream{}, rate: map[string]rateWindow{}}
	r.SetFaults(Faults{})
	if opts.DB != nil {
		if err := r.load(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Fail makes the registry refuse every later write (ErrFailed): the
// caller's transaction that RecordTx wrote in did not commit, so memory
// holds records the store lacks until the registry is reopened.
func (r *Registry) Fail() { r.failed.Store(true) }

// SetFaults replaces the fault configuration (the zero Faults: none).
func (r *Registry) SetFaults(f Faults) {
	r.faultMu.Lock()
	defer r.faultMu.Unlock()
	r.faults = f
	r.rng = rand.New(rand.NewPCG(f.Seed, 0x6b696e65736973))
}

// draw reports whether a fault of probability p fires.
func (r *Registry) draw(p func(Faults) float64) bool {
	r.faultMu.Lock()
	defer r.faultMu.Unlock()
	q := p(r.faults)
	return q > 0 && r.rng.Float64() < q
}

func (r *Registry) now() time.Time { return r.opts.Now() }

// visibleUpTo is the highest counter readers may see.
func (r *Registry) visibleUpTo() uint64 {
	if r.opts.DB == nil {
		return math.MaxUint64
	}
	return r.visible.Load()
}

func (r *Registry) publish(n uint64) {
	for {
		cur := r.visible.Load()
		if cur >= n || r.visible.CompareAndSwap(cur, n) {
			return
		}
	}
}

func (r *Registry) arnOf(name string) string {
	return "arn:aws:kinesis:" + r.opts.Region + ":" + r.opts.AccountID + ":stream/" + name
}

func (r *Registry) lookup(name string) *stream {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.streams[name]
}

// sortedNames returns the stream names in order.
func (r *Registry) sortedNames() []string {
	r.mu.RLock()
	out := make([]string, 0, len(r.streams))
	for n := range r.streams {
		out = append(out, n)
	}
	r.mu.RUnlock()
	sort.Strings(out)
	return out
}

// route returns the open shard taking hash key h (s.mu held). An active
// stream's open shards cover every hash key once.
func (s *stream) route(h u128) *shard {
	for _, sh := range s.shards {
		if sh.open() && sh.lo.cmp(h) <= 0 && h.cmp(sh.hi) <= 0 {
			return sh
		}
	}
	return nil
}

func (s *stream) shard(id string) *shard {
	i, ok := shardIndex(id)
	if !ok || i >= len(s.shards) {
		return nil
	}
	return s.shards[i]
}

// lastN is the counter of a shard's last record (0: none).
func (sh *shard) lastN() uint64 {
	if len(sh.records) == 0 {
		return 0
	}
	return sh.records[len(sh.records)-1].n
}
