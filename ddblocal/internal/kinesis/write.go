package kinesis

import (
	"errors"
	"fmt"
	"math"
	"time"

	"go.etcd.io/bbolt"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// change runs fn on stream s with s.mu held: fn checks the request, then
// changes s in memory and writes what it changed to b (nil in memory).
// With DB, it all happens in one transaction, committed before s.mu is
// released, so readers never see a change a crash could undo. fn returns
// an *apierr.Error only before it changed anything; any other error means
// memory and the store may disagree, and the registry refuses every later
// write (ErrFailed).
func (r *Registry) change(s *stream, fn func(b *sink) error) error {
	if r.failed.Load() {
		return ErrFailed
	}
	if r.opts.DB == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.deleted {
			return r.notFound(s.name)
		}
		return fn(nil)
	}
	// s.mu is taken inside the transaction (after the store's lock, as
	// RecordTo is called under it) and released once it has committed.
	locked := false
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	var fnErr error
	var top uint64
	err := r.opts.DB.Update(func(tx *bbolt.Tx) error {
		s.mu.Lock()
		locked = true
		if s.deleted {
			fnErr = r.notFound(s.name)
			return fnErr
		}
		b, err := r.streamSink(wal.Bolt(tx), tx, s.name)
		if err != nil {
			return err
		}
		if fnErr = fn(b); fnErr != nil {
			return fnErr
		}
		top = r.seq.Load()
		return tx.Bucket(rootBucket).Put(seqKey, be(top))
	})
	if fnErr != nil {
		if !refused(fnErr) {
			r.failed.Store(true)
		}
		return fnErr
	}
	if err != nil {
		r.failed.Store(true)
		return fmt.Errorf("kinesis: store: %w", err)
	}
	r.publish(top)
	return nil
}

// refused reports whether err is a refusal (an API error or a Go API
// error) returned before anything changed.
func refused(err error) bool {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return true
	}
	for _, e := range []error{ErrStreamNotFound, ErrShardNotFound, ErrShardClosed, ErrNotAdjacent, ErrShardTooNarrow} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// appendLocked gives rec the next counter and appends it to sh, writing it
// to b (s.mu held).
func (r *Registry) appendLocked(s *stream, sh *shard, rec *record, b *sink) error {
	rec.n = r.seq.Add(1)
	sh.records = append(sh.records, rec)
	if t := rec.at.Add(s.retention).UnixNano(); t < s.nextTrim {
		s.nextTrim = t
	}
	if b != nil {
		return writeRecord(b, sh, rec)
	}
	return nil
}

// appendFaulty appends a DynamoDB change record as Faults say (s.mu held):
// a record held back by the shard goes after this one; this one may be
// held back itself, or written twice.
func (r *Registry) appendFaulty(s *stream, sh *shard, rec *record, b *sink) error {
	if h := sh.held; h != nil {
		sh.held = nil
		if err := r.appendLocked(s, sh, rec, b); err != nil {
			return err
		}
		h.at = rec.at
		if err := r.appendLocked(s, sh, h, b); err != nil {
			return err
		}
		if b != nil {
			return writeHeld(b, sh, nil)
		}
		return nil
	}
	if r.draw(func(f Faults) float64 { return f.ReorderRate }) {
		sh.held = rec
		if b != nil {
			return writeHeld(b, sh, rec)
		}
		return nil
	}
	if err := r.appendLocked(s, sh, rec, b); err != nil {
		return err
	}
	if r.draw(func(f Faults) float64 { return f.DuplicateRate }) {
		dup := *rec
		return r.appendLocked(s, sh, &dup, b)
	}
	return nil
}

// releaseHeld appends the record sh holds back, if any (s.mu held).
func (r *Registry) releaseHeld(s *stream, sh *shard, b *sink) error {
	h := sh.held
	if h == nil {
		return nil
	}
	sh.held = nil
	h.at = r.now()
	if err := r.appendLocked(s, sh, h, b); err != nil {
		return err
	}
	if b != nil {
		return writeHeld(b, sh, nil)
	}
	return nil
}

// Record appends a DynamoDB change record (partition key pk, data) to the
// stream name, with Faults applied; records for a stream that does not
// exist are dropped. Use RecordTx when the registry has a DB.
func (r *Registry) Record(name, pk string, data []byte) {
	_ = r.RecordTx(nil, name, pk, data)
}

// RecordTx is Record within tx, the caller's transaction: the record is
// stored exactly when tx commits, and readers see it once it has. If tx
// does not commit, the registry holds a record that was never stored: the
// caller must stop writing and reopen the store (as ddblocal does).
func (r *Registry) RecordTx(tx *bbolt.Tx, name, pk string, data []byte) error {
	if tx == nil {
		return r.RecordTo(nil, name, pk, data)
	}
	return r.RecordTo(wal.Bolt(tx), name, pk, data)
}

// RecordTo is RecordTx writing to w, the caller's store transaction (a
// bbolt transaction, or a batch of ddblocal's log; nil: memory only):
// readers see the record once w's changes are durable (w's OnCommit).
func (r *Registry) RecordTo(w wal.Writer, name, pk string, data []byte) error {
	s := r.lookup(name)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deleted {
		return nil
	}
	sh := s.route(hashKey(pk))
	if sh == nil {
		return fmt.Errorf("kinesis: stream %s has no open shard for partition key %q", name, pk)
	}
	var b *sink
	if w != nil && r.opts.DB != nil {
		b = &sink{w: w, path: [][]byte{rootBucket, streamsBucket, []byte(name)}}
	}
	before := r.seq.Load()
	if err := r.appendFaulty(s, sh, &record{at: r.now(), pk: pk, data: data}, b); err != nil {
		return fmt.Errorf("kinesis: record in %s: %w", name, err)
	}
	if b != nil {
		// the counter is stored with the record it numbered
		if err := w.Put([][]byte{rootBucket}, seqKey, be(r.seq.Load())); err != nil {
			return fmt.Errorf("kinesis: record in %s: %w", name, err)
		}
		if top := r.seq.Load(); top > before {
			w.OnCommit(func() { r.publish(top) })
		}
	}
	return nil
}

// createStream creates a stream of n shards.
func (r *Registry) createStream(name string, n int, mode string) error {
	if r.failed.Load() {
		return ErrFailed
	}
	if r.opts.DB == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, err := r.createLocked(name, n, mode, nil)
		return err
	}
	// r.mu is taken inside the transaction and released once it has
	// committed: the stream shows only once it is stored.
	locked := false
	defer func() {
		if locked {
			r.mu.Unlock()
		}
	}()
	var s *stream
	var top uint64
	err := r.opts.DB.Update(func(tx *bbolt.Tx) error {
		r.mu.Lock()
		locked = true
		var err error
		if s, err = r.createLocked(name, n, mode, tx); err != nil {
			return err
		}
		top = r.seq.Load()
		return nil
	})
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return err
		}
		return fmt.Errorf("kinesis: store: %w", err)
	}
	r.publish(top)
	r.streams[name] = s
	return nil
}

// createLocked makes stream name and, with tx, writes it there (r.mu
// held); in memory it is registered at once.
func (r *Registry) createLocked(name string, n int, mode string, tx *bbolt.Tx) (*stream, error) {
	if _, ok := r.streams[name]; ok {
		return nil, apierr.New("ResourceInUseException", 400, "Stream %s under account %s already exists.", name, r.opts.AccountID)
	}
	now := r.now()
	s := &stream{name: name, arn: r.arnOf(name), created: now, mode: mode, retention: r.opts.Retention, nextTrim: math.MaxInt64}
	for i, rg := range hashRanges(n) {
		s.shards = append(s.shards, &shard{idx: i, lo: rg[0], hi: rg[1], created: now, start: r.seq.Add(1)})
	}
	if tx == nil {
		r.streams[name] = s
		return s, nil
	}
	b, err := r.streamSink(wal.Bolt(tx), tx, name)
	if err == nil {
		err = writeStreamMeta(b, s)
	}
	for _, sh := range s.shards {
		if err == nil {
			err = writeShard(b, sh)
		}
	}
	return s, err
}

// deleteStream removes a stream and its records.
func (r *Registry) deleteStream(s *stream) error {
	if r.failed.Load() {
		return ErrFailed
	}
	if r.opts.DB == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.streams[s.name] != s {
			return r.notFound(s.name)
		}
		r.forget(s)
		return nil
	}
	locked := false
	defer func() {
		if locked {
			r.mu.Unlock()
		}
	}()
	err := r.opts.DB.Update(func(tx *bbolt.Tx) error {
		r.mu.Lock()
		locked = true
		if r.streams[s.name] != s {
			return r.notFound(s.name)
		}
		return dropStreamBucket(tx, s.name)
	})
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return err
		}
		return fmt.Errorf("kinesis: store: %w", err)
	}
	r.forget(s)
	return nil
}

// forget marks s deleted and drops it from the registry (r.mu held).
func (r *Registry) forget(s *stream) {
	s.mu.Lock()
	s.deleted = true
	s.mu.Unlock()
	delete(r.streams, s.name)
}

// closeLocked closes an open shard at now, releasing a record it holds
// back first (s.mu held).
func (r *Registry) closeLocked(s *stream, sh *shard, now time.Time, b *sink) error {
	if err := r.releaseHeld(s, sh, b); err != nil {
		return err
	}
	sh.end = max(sh.start, sh.lastN())
	sh.closed = now
	if t := now.Add(s.retention).UnixNano(); t < s.nextTrim {
		s.nextTrim = t
	}
	if b != nil {
		return writeShard(b, sh)
	}
	return nil
}

// openLocked opens a child shard (s.mu held).
func (r *Registry) openLocked(s *stream, parent, adjacent string, lo, hi u128, now time.Time, b *sink) (*shard, error) {
	sh := &shard{idx: len(s.shards), parent: parent, adjacent: adjacent, lo: lo, hi: hi, created: now, start: r.seq.Add(1)}
	s.shards = append(s.shards, sh)
	if b != nil {
		return sh, writeShard(b, sh)
	}
	return sh, nil
}

func (r *Registry) notFound(name string) *apierr.Error {
	return apierr.NotFound("Stream %s under account %s not found.", name, r.opts.AccountID)
}

func (r *Registry) shardNotFound(s *stream, id string) *apierr.Error {
	return apierr.NotFound("Could not find shard %s in stream %s under account %s.", id, s.name, r.opts.AccountID)
}

func (r *Registry) notEligible(s *stream, id, what string) *apierr.Error {
	return invalidArg("Shard %s in stream %s under account %s has already been merged or split, and thus is not eligible for %s.", id, s.name, r.opts.AccountID, what)
}

// split splits open shard id at hash key at (s.mu held) and returns the
// children's ids.
func (r *Registry) split(s *stream, id string, at u128, b *sink) ([]string, error) {
	sh := s.shard(id)
	if sh == nil || sh.gone {
		return nil, r.shardNotFound(s, id)
	}
	if !sh.open() {
		return nil, r.notEligible(s, id, "splitting")
	}
	if at.cmp(sh.lo.add1()) <= 0 || at.cmp(sh.hi) >= 0 {
		return nil, invalidArg("NewStartingHashKey %s used in SplitShard() on shard %s in stream %s under account %s is not both greater than one plus the shard's StartingHashKey %s and less than the shard's EndingHashKey %s.",
			at, id, s.name, r.opts.AccountID, sh.lo, sh.hi)
	}
	now := r.now()
	if err := r.closeLocked(s, sh, now, b); err != nil {
		return nil, err
	}
	a, err := r.openLocked(s, sh.id(), "", sh.lo, at.sub1(), now, b)
	if err != nil {
		return nil, err
	}
	c, err := r.openLocked(s, sh.id(), "", at, sh.hi, now, b)
	if err != nil {
		return nil, err
	}
	return []string{a.id(), c.id()}, nil
}

// merge merges two adjacent open shards (s.mu held) and returns the
// child's id.
func (r *Registry) merge(s *stream, id, adjacentID string, b *sink) (string, error) {
	x, y := s.shard(id), s.shard(adjacentID)
	if x == nil || x.gone {
		return "", r.shardNotFound(s, id)
	}
	if y == nil || y.gone {
		return "", r.shardNotFound(s, adjacentID)
	}
	if !x.open() {
		return "", r.notEligible(s, id, "merging")
	}
	if !y.open() {
		return "", r.notEligible(s, adjacentID, "merging")
	}
	lo, hi := x.lo, y.hi
	switch {
	case follows(x, y):
	case follows(y, x):
		lo, hi = y.lo, x.hi
	default:
		return "", invalidArg("Shards %s and %s in stream %s under account %s are not an adjacent pair of shards eligible for merging", id, adjacentID, s.name, r.opts.AccountID)
	}
	now := r.now()
	if err := r.closeLocked(s, x, now, b); err != nil {
		return "", err
	}
	if err := r.closeLocked(s, y, now, b); err != nil {
		return "", err
	}
	c, err := r.openLocked(s, x.id(), y.id(), lo, hi, now, b)
	if err != nil {
		return "", err
	}
	return c.id(), nil
}

// follows reports whether shard b's hash keys start right after a's end.
func follows(a, b *shard) bool { return a.hi != maxU128 && a.hi.add1() == b.lo }

func (sh *shard) id() string { return shardID(sh.idx) }

// trimLocked drops records past the stream's retention, and marks closed
// shards empty and past it gone (s.mu held). It reports whether anything
// changed.
func (r *Registry) trimLocked(s *stream, now time.Time, b *sink) (bool, error) {
	cutoff := now.Add(-s.retention)
	changed := false
	for _, sh := range s.shards {
		n := 0
		for n < len(sh.records) && sh.records[n].at.Before(cutoff) {
			n++
		}
		if n > 0 {
			sh.trimmed = sh.records[n-1].n
			sh.records = append([]*record(nil), sh.records[n:]...)
			changed = true
			if b != nil {
				if err := deleteRecords(b, sh, sh.trimmed); err != nil {
					return changed, err
				}
			}
		}
		if !sh.open() && !sh.gone && len(sh.records) == 0 && sh.closed.Before(cutoff) {
			sh.gone = true
			changed = true
		}
		if changed && b != nil {
			if err := writeShard(b, sh); err != nil {
				return changed, err
			}
		}
	}
	s.noteTrim()
	return changed, nil
}

// noteTrim recomputes when trimLocked next has something to do (s.mu held).
func (s *stream) noteTrim() {
	next := int64(math.MaxInt64)
	for _, sh := range s.shards {
		if len(sh.records) > 0 {
			next = min(next, sh.records[0].at.Add(s.retention).UnixNano())
		} else if !sh.open() && !sh.gone {
			next = min(next, sh.closed.Add(s.retention).UnixNano())
		}
	}
	s.nextTrim = next
}

// housekeep trims s when something is past retention, and releases the
// record shard sh (nil: none) holds back, before a read at now.
func (r *Registry) housekeep(s *stream, sh *shard, now time.Time) error {
	s.mu.RLock()
	due := now.UnixNano() > s.nextTrim
	held := sh != nil && sh.held != nil
	s.mu.RUnlock()
	if !due && !held {
		return nil
	}
	return r.change(s, func(b *sink) error {
		if held {
			if err := r.releaseHeld(s, sh, b); err != nil {
				return err
			}
		}
		if now.UnixNano() > s.nextTrim {
			_, err := r.trimLocked(s, now, b)
			return err
		}
		return nil
	})
}
