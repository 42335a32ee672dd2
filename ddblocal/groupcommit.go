package ddblocal

import (
	"sync"
	"sync/atomic"

	"github.com/dynafold/dynafold/ddblocal/internal/wal"
)

// groupCommit stores the item writes of concurrent requests in shared
// store transactions: one fsync for every write that arrived while the
// previous transaction was being committed. No write waits for a timer: a
// write arriving at an idle store is committed at once, alone.
//
// One waiting writer at a time leads: it commits the queue it finds, hands
// every member its result, and passes the lead to the first writer that
// queued meanwhile (so no writer leads forever while its own answer waits).
type groupCommit struct {
	mu    sync.Mutex
	queue []*commitReq
	spare []*commitReq // the last batch's slice, emptied, for the next queue
	busy  bool         // a leader is committing
	// commits and writes count store transactions and the item writes
	// they stored (read by tests: concurrent writes share commits).
	commits atomic.Int64
	writes  atomic.Int64
	// testHook, when set (by tests), is called with "queued" when a write
	// joins the queue behind a commit in progress (n: the queue's length)
	// and with "commit" before a leader commits n writes.
	testHook atomic.Pointer[func(event string, n int)]
}

// commitReq is one write's changes waiting for a store transaction.
type commitReq struct {
	p    *pendingCommit
	err  error
	done chan bool // receives true: lead the next commit; false: err is set
}

// commitReqs holds commitReqs whose write returned, their channel empty:
// each receives at most one value, and its write returns after it.
var commitReqs = sync.Pool{New: func() any { return &commitReq{done: make(chan bool, 1)} }}

// store commits p, in a transaction shared with concurrent writers, and
// applies it in memory (under the write locks of the batch's tables, taken
// once for all its writes).
func (s *Server) store(p *pendingCommit) error {
	g := &s.gc
	r := commitReqs.Get().(*commitReq)
	r.p, r.err = p, nil
	defer func() {
		r.p, r.err = nil, nil
		commitReqs.Put(r)
	}()
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if g.busy {
		n := len(g.queue)
		g.mu.Unlock()
		if h := g.testHook.Load(); h != nil {
			(*h)("queued", n)
		}
		if lead := <-r.done; !lead {
			return r.err
		}
		g.mu.Lock()
	}
	g.busy = true
	batch := g.queue
	g.queue, g.spare = g.spare, nil
	g.mu.Unlock()

	if h := g.testHook.Load(); h != nil {
		(*h)("commit", len(batch))
	}
	s.commitBatch(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- true // still busy: the next writer leads
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	s.applyBatch(batch)
	for _, m := range batch {
		if m != r {
			m.done <- false // m is not touched after: its write returns
		}
	}
	clear(batch)
	g.mu.Lock()
	if g.spare == nil {
		g.spare = batch[:0]
	}
	g.mu.Unlock()
	return r.err
}

// commitBatch stores the writes of batch as one record of the log (one
// write, one sync) and sets each member's err. A member whose changes
// cannot be staged before it handed the stream registries a record fails
// alone; once the registries hold records the log lacks (staging or the
// append failed after), every member fails and the server refuses writes
// (failStore).
func (s *Server) commitBatch(batch []*commitReq) {
	if err := s.storeFailed(); err != nil {
		for _, m := range batch {
			m.err = err
		}
		return
	}
	staged := false
	err := s.wal.Commit(func(b *wal.Batch) error {
		for _, m := range batch {
			mark := b.Mark()
			st := false
			if err := s.stageTx(b, m.p, &st); err != nil {
				if st {
					staged = true
					return err
				}
				b.Rollback(mark)
				m.err = storeErr(err)
				continue
			}
			staged = staged || st
		}
		return nil
	})
	if err != nil {
		if staged {
			s.failStore(err)
		}
		for _, m := range batch {
			if m.err == nil {
				m.err = storeErr(err)
			}
		}
		return
	}
	s.gc.commits.Add(1)
	for _, m := range batch {
		if m.err == nil {
			s.gc.writes.Add(1)
		}
	}
}

// applyBatch applies the stored writes of batch in memory, under one
// acquisition of their tables' write locks. Each member still holds its
// items' locks, so no other write of them runs meanwhile.
func (s *Server) applyBatch(batch []*commitReq) {
	var ts []*table
	for _, m := range batch {
		if m.err == nil {
			for _, c := range m.p.eff {
				ts = append(ts, c.t)
			}
		}
	}
	if len(ts) == 0 {
		return
	}
	ts = lockOrder(ts)
	for _, t := range ts {
		t.mu.Lock()
	}
	for _, m := range batch {
		if m.err == nil {
			s.apply(m.p)
		}
	}
	unlockAll(ts)
}
