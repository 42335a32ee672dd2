package streams

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/dynafold/dynafold/abi"
)

// shard is one shard of a stream: the records of the partition keys whose
// hash lies in [lo, hi], from its creation until it closes.
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
	lo, hi   uint64 // the partition-key hashes it takes, inclusive

	// Readers see the shard once sequence number shown is visible, and see
	// it closed once endShown is (both 0: at once). A shard opened or
	// closed in a database transaction so shows only once it is stored.
	shown, endShown uint64
	// gen counts the changes of the shard's stored fields other than its
	// records (opening, closing, trimming); saved is the last one stored.
	gen, saved uint64
}

// listed reports whether readers that may see sequence numbers up to upTo
// see the shard.
func (sh *shard) listed(upTo uint64) bool { return sh.shown <= upTo }

// closedFor reports whether those readers see the shard closed.
func (sh *shard) closedFor(upTo uint64) bool { return sh.end != 0 && sh.endShown <= upTo }

// show makes a shard just opened or closed visible from sequence number seq.
func (sh *shard) show(seq uint64) {
	if sh.end != 0 {
		sh.endShown = seq
	} else {
		sh.shown = seq
	}
}

// hashRanges divides the 64-bit hash space into n equal ranges, inclusive.
func hashRanges(n int) [][2]uint64 {
	out := make([][2]uint64, n)
	for i := range out {
		lo, _ := bits.Div64(uint64(i), 0, uint64(n)) // i·2⁶⁴/n
		out[i][0] = lo
		if i > 0 {
			out[i-1][1] = lo - 1
		}
	}
	out[n-1][1] = math.MaxUint64
	return out
}

// keyHash is the hash of a partition-key value that picks its shard: FNV-1a
// over its type and bytes (as the table engine tells items apart), then
// murmur3's finalizer so that similar keys spread over the whole range.
func keyHash(v abi.Value) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	h = (h ^ uint64(v.Kind)) * prime
	if v.Kind == abi.KindB {
		for _, c := range v.Bytes {
			h = (h ^ uint64(c)) * prime
		}
	} else {
		for i := 0; i < len(v.Str); i++ {
			h = (h ^ uint64(v.Str[i])) * prime
		}
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// route returns the index in s.open of the open shard whose range holds h
// (s.mu held; the stream is enabled, so its open shards cover every hash).
func (s *stream) route(h uint64) int {
	return sort.Search(len(s.open), func(i int) bool { return s.open[i].hi >= h })
}

// openShard starts a new shard taking hashes [lo, hi] (s.mu held, or s not
// yet shared); the caller puts it into s.open. Its starting sequence number
// is taken from the registry's counter, so every record of the shard has a
// greater one. Shard ids are DynamoDB's shape, shardId-<ms>-<8 hex>, with
// a millisecond kept increasing per stream, so they sort in creation order.
func (s *stream) openShard(r *Registry, now time.Time, parent string, lo, hi uint64) *shard {
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
		lo:      lo,
		hi:      hi,
		gen:     1,
	}
	s.shards = append(s.shards, sh)
	s.byID[sh.id] = sh
	return sh
}

// close ends a shard (s.mu held): its EndingSequenceNumber is its last
// record's, or its start when it never got one. The caller takes it out of
// s.open.
func (sh *shard) close(s *stream, r *Registry, now time.Time) {
	sh.end = sh.last
	if sh.end == 0 {
		sh.end = sh.start
	}
	sh.closedAt = now
	sh.gen++
	if t := now.Add(r.opts.Retention).UnixNano(); t < s.nextTrim {
		s.nextTrim = t
	}
}

// roll closes the open shard s.open[i] and opens its child with the same
// key range (s.mu held). It returns the shards closed and opened.
func (s *stream) roll(r *Registry, now time.Time, i int) []*shard {
	p := s.open[i]
	p.close(s, r, now)
	c := s.openShard(r, now, p.id, p.lo, p.hi)
	s.open[i] = c
	s.noteRoll(r)
	return []*shard{p, c}
}

// split closes the open shard s.open[i] and opens two children, the first
// taking the lower half of its key range, the second the upper half (s.mu
// held; the range holds two hashes at least). It returns the shards closed
// and opened.
func (s *stream) split(r *Registry, now time.Time, i int) []*shard {
	p := s.open[i]
	p.close(s, r, now)
	mid := p.lo + (p.hi-p.lo)/2
	a := s.openShard(r, now, p.id, p.lo, mid)
	b := s.openShard(r, now, p.id, mid+1, p.hi)
	s.open = append(s.open[:i], append([]*shard{a, b}, s.open[i+1:]...)...)
	s.noteRoll(r)
	return []*shard{p, a, b}
}

// rollAged rolls over every open shard that reached ShardMaxAge (s.mu
// held) and returns the shards closed and opened (nil: none).
func (s *stream) rollAged(r *Registry, now time.Time) []*shard {
	var changed []*shard
	if s.status != StatusEnabled {
		return nil
	}
	for i, sh := range s.open {
		if now.Sub(sh.created) >= r.opts.ShardMaxAge {
			changed = append(changed, s.roll(r, now, i)...)
		}
	}
	return changed
}

// noteRoll recomputes when the first open shard reaches ShardMaxAge (s.mu held).
func (s *stream) noteRoll(r *Registry) {
	s.nextRoll = math.MaxInt64
	for _, sh := range s.open {
		s.nextRoll = min(s.nextRoll, sh.created.Add(r.opts.ShardMaxAge).UnixNano())
	}
}

// due reports whether a shard must roll over or a record be trimmed at now
// (s.mu held, for reading at least).
func (s *stream) due(now time.Time) (roll, trim bool) {
	n := now.UnixNano()
	return n >= s.nextRoll, n > s.nextTrim
}

// trim drops records older than the retention period and closed shards
// that are empty and were closed longer than the retention period ago
// (s.mu held). It reports whether anything changed.
func (s *stream) trim(r *Registry, now time.Time) bool {
	cutoff := now.Add(-r.opts.Retention)
	changed := false
	kept := s.shards[:0]
	next := int64(math.MaxInt64)
	for _, sh := range s.shards {
		n := 0
		for n < len(sh.records) && sh.records[n].at.Before(cutoff) {
			n++
		}
		if n > 0 {
			sh.trimmed = sh.records[n-1].seq
			sh.gen++
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
			delete(s.byID, sh.id)
			changed = true
			continue
		}
		if len(sh.records) > 0 {
			next = min(next, sh.records[0].at.Add(r.opts.Retention).UnixNano())
		} else if sh.end != 0 {
			next = min(next, sh.closedAt.Add(r.opts.Retention).UnixNano())
		}
		kept = append(kept, sh)
	}
	for i := len(kept); i < len(s.shards); i++ {
		s.shards[i] = nil
	}
	s.shards = kept
	s.nextTrim = next
	return changed
}

// shard returns the shard with the given id, or nil (s.mu held).
func (s *stream) shard(id string) *shard { return s.byID[id] }

// sortShards keeps shards in id order; ids are increasing by construction,
// so this only matters for shards loaded from a database.
func sortShards(shs []*shard) {
	sort.SliceStable(shs, func(i, j int) bool { return shs[i].id < shs[j].id })
}
