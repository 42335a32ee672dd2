package ddblocal

import (
	"slices"
	"sort"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/streams"
)

// change is one item write: old is the item before (nil: absent), new the
// item after (nil: deleted).
type change struct {
	t *table
	// key holds the item's key attributes; a put's is its whole item (a
	// key map per write was a quarter of a PutItem's garbage), so read
	// only the table's key names from it, or take t.keyCopy(key).
	key abi.Item
	old abi.Item
	new abi.Item
}

// noop reports whether the change leaves the item as it was.
func (c change) noop() bool {
	if c.old == nil || c.new == nil {
		return c.old == nil && c.new == nil
	}
	return abi.ItemsEqual(c.old, c.new)
}

var ttlIdentity = &streams.Identity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}

// pendingCommit is a write's effective changes (those that change
// something) with their stream and Kinesis records, ready to be stored and
// applied.
type pendingCommit struct {
	eff   []change
	recs  []streamRecord
	krecs []kinesisRecord
	at    time.Time
	tok   *txToken // a transaction's ClientRequestToken, stored with its writes
}

// prepare returns the commit of changes, or nil when none changes
// anything. The caller holds the tables' locks (read or write): the
// records depend on their stream and Kinesis settings.
func (s *Server) prepare(changes []change, ident *streams.Identity) *pendingCommit {
	eff := changes[:0:0]
	for _, c := range changes {
		if !c.noop() {
			eff = append(eff, c)
		}
	}
	if len(eff) == 0 {
		return nil
	}
	at := s.now()
	return &pendingCommit{eff: eff, recs: streamChanges(eff, ident, at), krecs: s.kinesisChanges(eff, ident, at), at: at} // kinesis_dest.go
}

// apply applies a commit in memory (and, in memory mode, records it in
// the tables' streams). The caller holds the write lock of every table
// involved.
func (s *Server) apply(p *pendingCommit) {
	if w := s.faults.staleWindow(); w > 0 {
		for _, c := range p.eff {
			c.t.noteStale(c.key, c.old, p.at, p.at.Add(w))
		}
	}
	for _, c := range p.eff {
		if c.new == nil {
			c.t.remove(c.key)
		} else {
			c.t.put(c.new)
		}
	}
	if s.db == nil {
		for _, r := range p.recs {
			s.streams.Record(r.arn, r.ch)
		}
		for _, r := range p.krecs {
			s.kin.Record(r.stream, r.pk, r.data)
		}
	}
}

// write runs an item write: decide computes its changes from the items
// as they are (evaluating conditions), then they are stored with their
// stream records (and the records of a Kinesis streaming destination) in
// one store transaction (so an acknowledged write never lacks its record,
// nor has two, whatever instant the process dies at), then applied in
// memory. Changes that change nothing are neither stored nor recorded.
//
// refs are the items the write may change, in tables ts. In memory, decide
// and the apply run under the tables' write locks. With a store, the
// items' locks (keylock.go) are held throughout, so a write persisted but
// not yet applied is never read past by another write of its items; the
// tables are only read-locked while decide runs and write-locked for the
// apply, and the store commit, shared with concurrent writes of other
// items (groupcommit.go, which applies all the writes of a commit under
// one acquisition of the table locks), holds no table lock. Each table's writer lock
// (read-locked here) keeps its metadata (streams, Kinesis destination,
// deletion) as decide saw it until the write is applied.
//
// done, when not nil, runs once the write succeeded, its locks still held
// (a transaction's idempotency token is remembered before a retry of it
// can take its items' locks).
func (s *Server) write(ts []*table, refs []itemRef, ident *streams.Identity, decide func() ([]change, error), done func()) error {
	return s.writeTok(ts, refs, ident, nil, decide, done)
}

// writeTok is write, with tok (when not nil) called once decide succeeded
// on a data dir: the token it returns (nil: none) is stored in the same
// log record as the write's changes, even when they change nothing, with
// the commit's time set in it.
func (s *Server) writeTok(ts []*table, refs []itemRef, ident *streams.Identity, tok func() *txToken, decide func() ([]change, error), done func()) error {
	ts = lockOrder(ts)
	if s.db == nil {
		for _, t := range ts {
			t.mu.Lock()
		}
		defer unlockAll(ts)
		cs, err := decide()
		if err != nil {
			return err
		}
		if p := s.prepare(cs, ident); p != nil {
			s.apply(p)
		}
		if done != nil {
			done()
		}
		return nil
	}
	unlockKeys := s.keys.lock(refs)
	defer unlockKeys()
	for _, t := range ts {
		t.wmu.RLock()
	}
	defer func() {
		for i := len(ts) - 1; i >= 0; i-- {
			ts[i].wmu.RUnlock()
		}
	}()
	for _, t := range ts {
		t.mu.RLock()
	}
	cs, err := decide()
	var p *pendingCommit
	if err == nil {
		p = s.prepare(cs, ident)
		if tok != nil {
			if k := tok(); k != nil {
				if p == nil {
					p = &pendingCommit{at: s.now()}
				}
				k.at, p.tok = p.at, k
			}
		}
	}
	for i := len(ts) - 1; i >= 0; i-- {
		ts[i].mu.RUnlock()
	}
	if err == nil && p != nil {
		err = s.store(p) // stored, then applied
	}
	if err == nil && done != nil {
		done()
	}
	return err
}

// lockOrder returns the distinct tables of ts in name order, the order
// every writer of several tables locks them in.
func lockOrder(ts []*table) []*table {
	if len(ts) == 1 {
		return ts
	}
	var out []*table
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func unlockAll(ts []*table) {
	for i := len(ts) - 1; i >= 0; i-- {
		ts[i].mu.Unlock()
	}
}

// streamRecord is the stream record of one change.
type streamRecord struct {
	arn string
	ch  streams.Change
}

// streamChanges returns the stream records of changes to tables whose
// stream is enabled.
func streamChanges(eff []change, ident *streams.Identity, at time.Time) []streamRecord {
	var out []streamRecord
	for _, c := range eff {
		m := c.t.meta
		if m.Stream == nil || !m.Stream.StreamEnabled || m.StreamArn == "" {
			continue
		}
		ch := streams.Change{Keys: c.t.keyCopy(c.key), UserIdentity: ident, At: at}
		switch {
		case c.old == nil:
			ch.EventName = "INSERT"
		case c.new == nil:
			ch.EventName = "REMOVE"
		default:
			ch.EventName = "MODIFY"
		}
		vt := m.Stream.StreamViewType
		if vt == "OLD_IMAGE" || vt == "NEW_AND_OLD_IMAGES" {
			ch.OldImage = c.old
		}
		if vt == "NEW_IMAGE" || vt == "NEW_AND_OLD_IMAGES" {
			ch.NewImage = c.new
		}
		out = append(out, streamRecord{m.StreamArn, ch})
	}
	return out
}

func itemSize(it abi.Item) int { return expr.ItemSize(it) }
