package sidecar

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// held is a lease this worker holds and the goroutine reading its shard.
type held struct {
	mu        sync.Mutex
	l         lease.Lease
	lastRenew time.Time
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

// write applies a lease write under the lock, so renewals and checkpoints
// never race on the counter. When the write finds the counter moved but
// the lease still this worker's, another worker asked for it (a steal
// request): the shard's reading stops after the batch in flight, which is
// checkpointed before the lease is released, and the write is tried again.
// A lease another worker owns stops the shard's reading at once.
func (r *Reader) write(ctx context.Context, h *held, f func(lease.Lease) (lease.Lease, error)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return lease.ErrLost
	}
	l, err := f(h.l)
	if errors.Is(err, lease.ErrLost) {
		fresh, ok, gerr := r.leases.Get(ctx, h.l.Key)
		if gerr == nil && ok && fresh.Owner == h.l.Owner {
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
		h.l, h.lastRenew = l, time.Now()
	case errors.Is(err, lease.ErrLost):
		h.lost = true
		go h.stop()
	}
	return err
}

// round is one lease round: renew what is held, create leases for new
// shards, take free and expired leases up to this worker's share, steal at
// most one for balance, and start reading what was taken.
func (r *Reader) round(ctx, proc context.Context, rd *feed.Reader, tr *lease.Tracker) error {
	r.renewAll(ctx)
	shards, err := rd.Shards(ctx)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, s := range shards {
		listed[s.ID] = true
	}
	all, err := r.leases.List(ctx)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, l := range all {
		have[l.Key] = true
	}
	created := false
	for _, s := range shards {
		if have[s.ID] {
			continue
		}
		var parents []string
		if s.ParentID != "" {
			parents = []string{s.ParentID}
		}
		if _, err := r.leases.Create(ctx, rd.StreamArn(), s.ID, parents); err != nil {
			return err
		}
		created = true
	}
	if created {
		if all, err = r.leases.List(ctx); err != nil {
			return err
		}
	}
	for _, l := range all {
		if l.Finished() && !listed[l.Key] { // trimmed away after it was read: nothing left to do
			if err := r.leases.Delete(ctx, l); err != nil {
				r.log.Warn("deleting a finished shard's lease failed", "shard", l.Key, "err", err)
			}
		}
	}
	now := time.Now()
	tr.Observe(all, now)
	avail := lease.Available(all, listed)
	r.mu.Lock()
	for id, h := range r.held { // forget workers that ended (shard finished, lease lost)
		select {
		case <-h.done:
			delete(r.held, id)
		default:
		}
	}
	mine := map[string]bool{}
	for id := range r.held {
		mine[id] = true
	}
	r.mu.Unlock()
	for i := range avail { // what this worker still holds counts as its own
		if mine[avail[i].Key] {
			avail[i].Owner = r.sc.WorkerID
		} else if avail[i].Owner == r.sc.WorkerID {
			avail[i].Owner = "" // a lease of an earlier run under the same id
		}
	}
	plan := lease.Balance(avail, r.sc.WorkerID, func(l lease.Lease) bool { return tr.Expired(l, now) })
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
	r.obs.LeasesHeld(r.sc.WorkerID, rd.StreamArn(), ids, len(shards))
	return nil
}

// noteWaiting logs, once per shard and owner, why a worker that holds no
// shard reads nothing: another worker holds the lease (after a crash, the
// crashed worker still does until its lease expires).
func (r *Reader) noteWaiting(avail []lease.Lease, tr *lease.Tracker, now time.Time) {
	for _, l := range avail {
		if l.Owner == "" || l.Owner == r.sc.WorkerID || tr.Expired(l, now) || r.waiting[l.Key] == l.Owner {
			continue
		}
		r.waiting[l.Key] = l.Owner
		r.log.Info("shard held by another worker; this one takes it over if that worker stops renewing the lease for the lease duration",
			"shard", l.Key, "owner", l.Owner, "leaseDuration", tr.Duration.String())
	}
}

// take takes a free or expired lease and starts reading its shard.
func (r *Reader) take(ctx, proc context.Context, rd *feed.Reader, l lease.Lease) {
	prev := l.Owner
	got, err := r.leases.Take(ctx, l, r.sc.WorkerID)
	if err != nil {
		if !errors.Is(err, lease.ErrLost) {
			r.log.Warn("taking a lease failed", "shard", l.Key, "err", err)
		}
		return // another worker was faster
	}
	read, cancel := context.WithCancel(ctx)
	h := &held{l: got, lastRenew: time.Now(), cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.held[l.Key] = h
	r.mu.Unlock()
	r.log.Info("lease taken", "shard", l.Key, "checkpoint", got.Checkpoint, "previousOwner", prev)
	go func() {
		defer close(h.done)
		defer cancel()
		r.work(read, proc, rd, h)
	}()
}

// renewAll renews every lease held; a lease lost, or not renewed for a
// whole lease duration, stops its shard's reading.
func (r *Reader) renewAll(ctx context.Context) {
	r.mu.Lock()
	hs := make([]*held, 0, len(r.held))
	for _, h := range r.held {
		hs = append(hs, h)
	}
	r.mu.Unlock()
	for _, h := range hs {
		select {
		case <-h.done:
			continue
		default:
		}
		err := r.write(ctx, h, func(l lease.Lease) (lease.Lease, error) { return r.leases.Renew(ctx, l) })
		switch {
		case errors.Is(err, lease.ErrLost):
			r.logLost(ctx, h.get().Key)
		case err != nil && ctx.Err() == nil:
			h.mu.Lock()
			stale := time.Since(h.lastRenew) > time.Duration(r.sc.LeaseDuration)
			if stale {
				h.lost = true
			}
			h.mu.Unlock()
			r.log.Warn("renewing a lease failed", "shard", h.get().Key, "err", err, "givingUp", stale)
			if stale {
				h.stop()
			}
		}
	}
}
