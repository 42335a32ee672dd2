package sidecar

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// held is a lease this worker holds and the goroutine reading its shard.
type held struct {
	mu        sync.Mutex
	l         lease.Lease
	lastWrite time.Time // the last write of the lease that went through
	lost      bool
	handoff   bool          // another worker asked for it: released after the batch in flight
	cancel    func()        // ends the reading (graceful stop or lease lost)
	done      chan struct{} // closed when the goroutine has returned
	stopOnce  sync.Once
}

func (h *held) stop() { h.stopOnce.Do(h.cancel) }

// get returns the lease as last written.
func (h *held) get() lease.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.l
}

// isLost reports whether the lease was found held by another.
func (h *held) isLost() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lost
}

// writtenWithin reports whether the lease was written less than d ago.
func (h *held) writtenWithin(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Since(h.lastWrite) < d
}

// write applies a lease write under the lock, so renewals and checkpoints
// never race on the counter. When the write finds the counter moved but
// the lease still this process's (same worker id and instance), another
// worker asked for it (a steal request): the shard's reading stops after
// the batch in flight, which is checkpointed before the lease is
// released, and the write is tried again. A lease another worker owns, or
// another process under this worker id, stops the shard's reading at once.
func (r *Reader) write(ctx context.Context, h *held, f func(lease.Lease) (lease.Lease, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return lease.ErrLost
	}
	l, err := f(h.l)
	if errors.Is(err, lease.ErrLost) {
		fresh, ok, gerr := r.leases.Get(ctx, h.l.Key)
		if gerr == nil && ok && fresh.Owner == h.l.Owner && fresh.Instance == h.l.Instance {
			if fresh.StealBy != "" && !h.handoff {
				h.handoff = true
				r.log.Info("handing a lease over on request", "shard", fresh.Key, "to", fresh.StealBy)
				go h.stop()
			}
			h.l = fresh
			l, err = f(h.l)
		}
	}
	switch {
	case err == nil:
		h.l, h.lastWrite = l, time.Now()
	case errors.Is(err, lease.ErrLost):
		h.lost = true
		go h.stop()
	}
	return err
}

// round is one lease round: renew what is held; in a full round, list the
// stream's shards and create leases for new ones (a quick round, after a
// shard finished and its children's leases were created, relies on the
// listing of the last full round); take free and expired leases up to
// this worker's share, ask for leases for balance, and start reading what
// was taken.
func (r *Reader) round(ctx, proc context.Context, rd feed.Source, tr *lease.Tracker, full bool) error {
	r.renewAll(ctx)
	var shards []feed.Shard
	if full {
		var err error
		if shards, err = rd.Shards(ctx); err != nil {
			return err
		}
	}
	raw, ctl, err := r.leases.ListAll(ctx)
	if err != nil {
		return err
	}
	// only this stream's leases: another stream's in the same table are
	// another fleet's, never taken, balanced, deleted or read as lost
	all := r.own(raw, rd.StreamArn())
	if full {
		if err := r.sharedShards(raw, shards, rd.StreamArn()); err != nil {
			r.setFatal(err)
			return nil
		}
		if all, err = r.createLeases(ctx, rd, shards, raw); err != nil {
			return err
		}
	}
	r.mu.Lock()
	listed := make(map[string]bool, len(r.listed))
	for id := range r.listed {
		listed[id] = true
	}
	r.mu.Unlock()
	if full {
		for _, l := range all {
			if l.Finished() && !listed[l.Key] { // trimmed away after it was read: nothing left to do
				if err := r.leases.Delete(ctx, l); err != nil {
					r.log.Warn("deleting a finished shard's lease failed", "shard", l.Key, "err", why(err))
				}
			}
		}
	}
	now := time.Now()
	tr.Observe(all, now)
	r.applyControls(ctx, all, ctl, func(l lease.Lease) bool { return tr.Expired(l, now) })
	r.sweeper.Store(r.sweeps(all, func(l lease.Lease) bool { return tr.Expired(l, now) }))
	r.mu.Lock()
	// forget workers that ended (shard finished, lease lost); the listing
	// was read before they ended, so what it says of their leases is
	// stale until the next round
	ended := map[string]bool{}
	for id, h := range r.held {
		select {
		case <-h.done:
			delete(r.held, id)
			ended[id] = true
		default:
		}
	}
	mine := map[string]bool{}
	for id := range r.held {
		mine[id] = true
	}
	r.mu.Unlock()
	if err := r.dupes.observe(all, mine, now); err != nil {
		r.setFatal(err)
		return nil
	}
	avail := available(all, listed, mine, ended, r.sc.WorkerID, r.instance)
	plan := lease.Balance(avail, r.sc.WorkerID, func(l lease.Lease) bool { return tr.Expired(l, now) })
	r.mu.Lock()
	r.nextExpiry = nextExpiry(avail, mine, tr, now)
	r.mu.Unlock()
	if len(mine) == 0 && len(plan.Take) == 0 {
		r.noteWaiting(avail, tr, now)
	}
	for _, l := range plan.Take {
		r.take(ctx, proc, rd, l)
	}
	for _, st := range plan.Steal {
		// the owner hands it over after its batch in flight, and it is
		// taken as a free lease then; an owner that never does lets it
		// expire
		if _, err := r.leases.RequestSteal(ctx, st, r.sc.WorkerID); err == nil {
			r.log.Info("asked for a lease, for balance", "shard", st.Key, "owner", st.Owner)
		}
	}
	r.mu.Lock()
	ids := make([]string, 0, len(r.held))
	for id := range r.held {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	r.obs.LeasesHeld(r.sc.WorkerID, rd.StreamArn(), ids, len(listed))
	return nil
}

// available returns the leases a round plans with, as this worker
// (worker, instance) sees them: what it holds (mine) counts as its own; a
// lease of its worker id that it does not hold is another process's (or
// an earlier run's that crashed), taken once it expires; and the leases
// of shards whose reading ended after the listing was read (ended) are
// left out, the listing stale for them until the next round (a finished
// shard would otherwise show this worker as owner without its end).
func available(all []lease.Lease, listed, mine, ended map[string]bool, worker, instance string) []lease.Lease {
	avail := lease.Available(all, listed)
	avail = slices.DeleteFunc(avail, func(l lease.Lease) bool { return ended[l.Key] })
	for i := range avail {
		switch {
		case mine[avail[i].Key]:
			avail[i].Owner, avail[i].Instance = worker, instance
		case avail[i].Owner == worker:
			avail[i].Owner = otherInstance(worker, avail[i].Instance)
		}
	}
	return avail
}

// createLeases keeps the stream's listing for the quick rounds and
// creates the leases of listed shards that have none (all is the whole
// table); it returns the stream's own leases, read again when it created
// any.
func (r *Reader) createLeases(ctx context.Context, rd feed.Source, shards []feed.Shard, all []lease.Lease) ([]lease.Lease, error) {
	have := map[string]bool{}
	for _, l := range all {
		have[l.Key] = true
	}
	listed := make(map[string]bool, len(shards))
	created := false
	for _, s := range shards {
		listed[s.ID] = true
		if have[s.ID] {
			continue
		}
		if _, err := r.leases.Create(ctx, rd.StreamArn(), s.ID, s.Parents()); err != nil {
			return nil, err
		}
		created = true
	}
	r.mu.Lock()
	r.listed = listed
	r.mu.Unlock()
	if created {
		var err error
		if all, err = r.leases.List(ctx); err != nil {
			return nil, err
		}
	}
	own, _ := lease.Split(all, rd.StreamArn())
	return own, nil
}

// nextExpiry is when the first lease held by another worker expires if its
// counter does not move again (zero when none may): the round then runs
// at once, so a crashed worker's shards are taken over a lease duration
// after it last wrote, not up to a round later.
func nextExpiry(avail []lease.Lease, mine map[string]bool, tr *lease.Tracker, now time.Time) time.Time {
	var next time.Time
	for _, l := range avail {
		if mine[l.Key] || (l.Owner == "" && l.StealBy == "") {
			continue
		}
		if at, ok := tr.ExpiresAt(l); ok && at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// noteWaiting logs, once per shard and owner, why a worker that holds no
// shard reads nothing: another worker holds the lease (after a crash, the
// crashed worker still does until its lease expires). The shards a lease
// round finds held are told in one line, not one per shard.
func (r *Reader) noteWaiting(avail []lease.Lease, tr *lease.Tracker, now time.Time) {
	var shards []string
	owners := map[string]bool{}
	for _, l := range avail {
		if l.Owner == "" || l.Owner == r.sc.WorkerID || tr.Expired(l, now) || r.waiting[l.Key] == l.Owner {
			continue
		}
		r.waiting[l.Key] = l.Owner
		shards = append(shards, l.Key)
		owners[l.Owner] = true
	}
	if len(shards) == 0 {
		return
	}
	names := make([]string, 0, len(owners))
	for o := range owners {
		names = append(names, o)
	}
	sort.Strings(names)
	r.log.Info("shards held by other workers; this one takes a shard over if its owner stops renewing the lease for the lease duration",
		"count", len(shards), "owners", strings.Join(names, ","), "shards", strings.Join(shards, ","), "leaseDuration", tr.Duration.String())
}

// take takes a free or expired lease and starts reading its shard.
func (r *Reader) take(ctx, proc context.Context, rd feed.Source, l lease.Lease) {
	prev := l.Owner
	if l.Stream == "" {
		l.Stream = rd.StreamArn() // written before leases recorded their stream: record it
	}
	got, err := r.leases.Take(ctx, l, r.sc.WorkerID, r.instance)
	if err != nil {
		if !errors.Is(err, lease.ErrLost) {
			r.log.Warn("taking a lease failed", "shard", l.Key, "err", why(err))
		}
		return // another worker was faster
	}
	read, cancel := context.WithCancel(ctx)
	h := &held{l: got, lastWrite: time.Now(), cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.held[l.Key] = h
	r.mu.Unlock()
	if prev == "" && l.StealBy == r.sc.WorkerID {
		prev = "(released to this worker on its request)" // a released lease names no owner
	}
	r.log.Info("lease taken", "shard", l.Key, "checkpoint", got.Checkpoint, "previousOwner", prev)
	go func() {
		defer close(h.done)
		defer cancel()
		r.work(read, proc, rd, h)
	}()
}

// renewAll renews, at once, every lease held that was not written for a
// while (a checkpoint renews too); a lease lost, or not renewed for a
// whole lease duration, stops its shard's reading.
func (r *Reader) renewAll(ctx context.Context) {
	r.mu.Lock()
	hs := make([]*held, 0, len(r.held))
	for _, h := range r.held {
		hs = append(hs, h)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range hs {
		select {
		case <-h.done:
			continue
		default:
		}
		if h.writtenWithin(r.renewEvery() / 2) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.renew(ctx, h)
		}()
	}
	wg.Wait()
}

func (r *Reader) renew(ctx context.Context, h *held) {
	err := r.write(ctx, h, func(l lease.Lease) (lease.Lease, error) { return r.leases.Renew(ctx, l) })
	switch {
	case errors.Is(err, lease.ErrLost):
		r.logLost(ctx, h.get().Key)
	case err != nil && ctx.Err() == nil:
		h.mu.Lock()
		stale := time.Since(h.lastWrite) > time.Duration(r.sc.LeaseDuration)
		if stale {
			h.lost = true
		}
		h.mu.Unlock()
		r.log.Warn("renewing a lease failed", "shard", h.get().Key, "err", why(err), "givingUp", stale)
		if stale {
			h.stop()
		}
	}
}
