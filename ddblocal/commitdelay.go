package ddblocal

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The commit delay: PostgreSQL's commit_delay with commit_siblings, MySQL's
// binlog_group_commit_sync_delay. Each store commit costs one fdatasync
// (and the wake-ups around it), whatever the number of writes it stores. A
// leader about to commit while write requests the server has accepted are
// still being read, checked or evaluated (they will queue within
// microseconds) waits for them, at most defaultCommitDelay, so that they
// share its commit instead of each paying for the next one. With no such
// request (a write at an idle server, one client writing) the leader
// commits at once: nothing waits for the timer unless another write is in
// flight.
//
// A request counts from the start of its operation (handle) to its end;
// arriving is those counted less those in store (queued or committing), so
// it is exact but for a write between its commit and its answer (counted a
// few microseconds too long: the leader may wait for it to answer) and the
// server's own writes (TTL deletions, in store but never counted: arriving
// is then too small, and the leader waits less).

// defaultCommitDelay bounds a leader's wait for the writes in flight: a
// fraction of an fdatasync's time on a disk, so a write waits less for
// the writes in flight than it would for the next commit.
const defaultCommitDelay = 200 * time.Microsecond

// isWriteTarget reports whether target is an operation that writes items
// (the requests a leader waits for).
func isWriteTarget(target string) bool {
	op, ok := strings.CutPrefix(target, dynamoPrefix)
	if !ok {
		return false
	}
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

// arriving returns the number of write requests being served that have
// not reached store.
func (g *groupCommit) arriving() int {
	return int(g.inWrite.Load() - g.inStore.Load())
}

// beginWrite counts a write request the server has accepted; endWrite,
// called once it is answered, stops counting it (and wakes a leader
// waiting for it when it did not reach store).
func (g *groupCommit) beginWrite() { g.inWrite.Add(1) }

func (g *groupCommit) endWrite() {
	g.inWrite.Add(-1)
	if g.gathering.Load() {
		g.mu.Lock()
		g.joined()
		g.mu.Unlock()
	}
}

// joined wakes the waiting leader, if any, once the writes it waits for
// have queued or left (its queue holds want writes, or none arrives).
// g.mu is held.
func (g *groupCommit) joined() {
	if g.gathering.Load() && (len(g.queue) >= g.want || !g.waitAll && g.arriving() <= 0) {
		g.gathering.Store(false)
		g.wake <- struct{}{} // buffered; one send per wait
	}
}

// gather, called by a leader (g.mu held, its write queued) before it
// takes the queue, waits while write requests are on their way to store,
// at most g.delay, for them to queue. It returns at once when none is.
func (g *groupCommit) gather(handed bool) {
	if handed {
		DbgHanded.Add(1)
	}
	if len(g.queue) < len(DbgHist) {
		DbgHist[len(g.queue)].Add(1)
	}
	if expYield > 0 {
		g.mu.Unlock()
		for range expYield {
			runtime.Gosched()
		}
		g.mu.Lock()
	}
	if g.delay <= 0 {
		return
	}
	n := g.arriving()
	g.want, g.waitAll = len(g.queue)+n, false
	if expWant > 0 && g.lastSize >= 2 && nanotime()-g.lastEnd < int64(expWindow)*1000 && g.lastSize+expWant-1 > g.want {
		g.want, g.waitAll = g.lastSize+expWant-1, true
	}
	if g.want <= len(g.queue) {
		return
	}
	if g.wake == nil {
		g.wake = make(chan struct{}, 1)
		g.timer = time.NewTimer(g.delay)
	} else {
		g.timer.Reset(g.delay)
	}
	g.gathering.Store(true)
	if !g.waitAll && g.arriving() <= 0 { // one ended before it saw gathering (endWrite)
		g.gathering.Store(false)
		g.timer.Stop()
		return
	}
	g.mu.Unlock()
	if h := g.testHook.Load(); h != nil {
		(*h)("gather", n)
	}
	g.gathers.Add(1)
	select {
	case <-g.wake:
		g.timer.Stop()
	case <-g.timer.C:
		g.gatherTimeouts.Add(1)
	}
	g.mu.Lock()
	if g.gathering.Load() { // the timer ended the wait
		g.gathering.Store(false)
	} else {
		select { // joined woke the wait after the timer ended it
		case <-g.wake:
		default:
		}
	}
}

// commitDelay is defaultCommitDelay, or DDBLOCAL_COMMIT_DELAY_US (tuning, temporary).
func commitDelay() time.Duration {
	if v, err := strconv.Atoi(os.Getenv("DDBLOCAL_COMMIT_DELAY_US")); err == nil {
		return time.Duration(v) * time.Microsecond
	}
	return defaultCommitDelay
}

var expWant, _ = strconv.Atoi(os.Getenv("DDBLOCAL_GATHER_WANT"))

var DbgHanded atomic.Int64
var DbgHist [10]atomic.Int64

var expWindow, _ = strconv.Atoi(os.Getenv("DDBLOCAL_GATHER_WINDOW_US"))

func nanotime() int64 { return int64(time.Since(procStart)) }

var procStart = time.Now()

var expYield, _ = strconv.Atoi(os.Getenv("DDBLOCAL_EXP_YIELD"))
