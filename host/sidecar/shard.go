package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/privfile"
)

// retryDelay is the wait before a failed record is delivered again.
var retryDelay = backoff.Policy{Base: 50 * time.Millisecond, Max: 2 * time.Second}

// noTableDelay is the wait before a record that failed on a table that
// does not exist is delivered again: the table comes back when an
// operator creates it, not in a few seconds.
var noTableDelay = backoff.Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}

// work reads one shard until read ends (graceful stop, lease lost) or the
// shard is finished: each batch goes through the host; its checkpoint is
// written while the next batch is processed (see checkpointer). proc is
// the context batches and checkpoints run under; it ends only when the
// run is abandoned.
func (r *Reader) work(read, proc context.Context, rd feed.Source, h *held) {
	l := h.get()
	shard := l.Key
	// abandoned: the run was cut short as by a crash; read inherits the
	// run's cause at once, proc only once Run has seen it.
	abandoned := func() bool { return proc.Err() != nil || errors.Is(context.Cause(read), ErrAbandoned) }
	defer r.lags.Delete(shard)
	ckpt := l.Checkpoint
	if ckpt == lease.TrimHorizon {
		ckpt = ""
	}
	it := rd.Open(shard, ckpt)
	ds := &deliveries{attempts: map[string]*attempt{}, stuck: map[string]bool{}}
	cp := &checkpointer{r: r, h: h, ctx: proc}
	defer cp.wait()
	retries := 0
	var ahead *readAhead
	defer func() { ahead.wait() }()
	for read.Err() == nil {
		var b feed.Batch
		var err error
		if ahead != nil {
			b, err = ahead.wait()
			ahead = nil
		} else {
			b, err = it.Next(read)
		}
		if err != nil {
			if read.Err() != nil {
				break
			}
			var te *feed.TrimmedError
			if errors.As(err, &te) {
				if cp.wait() != nil && h.isLost() {
					return
				}
				if done := r.trimmed(proc, h, it, te); done {
					return
				}
				continue
			}
			r.log.Warn("reading a shard failed; retrying", "shard", shard, "err", why(err))
			_ = backoff.Sleep(read, time.Duration(r.sc.PollInterval))
			continue
		}
		behind := b.Behind // Kinesis's MillisBehindLatest
		if n := len(b.Records); n > 0 && !b.BehindKnown {
			if t := b.Records[n-1].DynamoDB.ApproximateCreationDateTime; !t.IsZero() {
				behind = max(time.Since(t), 0)
			}
		}
		r.obs.ShardRead(rd.StreamArn(), shard, len(b.Records), behind)
		if len(b.Records) == 0 {
			r.lags.Store(shard, readLag{})
		}
		if len(b.Records) > 0 {
			// the lag is the age of the oldest record not yet done: this
			// batch's first (it may be one that failed before)
			held := false
			if v, ok := r.lags.Load(shard); ok {
				held = v.(readLag).held
			}
			r.lags.Store(shard, readLag{oldest: written(b.Records[0], behind), held: held})
			if !b.Finished {
				ahead = readNext(read, it) // the next batch is read while this one is processed
			}
			n, rewind := r.deliver(proc, rd.StreamArn(), shard, b.Records, ds)
			r.records.Add(int64(n))
			if abandoned() {
				return // no checkpoint, no release
			}
			if rewind {
				r.lags.Store(shard, readLag{oldest: written(b.Records[n], behind), held: true})
			} else {
				r.lags.Store(shard, readLag{})
			}
			if rewind {
				ahead.wait() // its batch is dropped: reading goes back
				ahead = nil
				if cp.wait() != nil && h.isLost() {
					return
				}
				if n > 0 {
					cp.start(b.Records[n-1].DynamoDB.SequenceNumber)
				}
				it.Rewind(b.Records[n].DynamoDB.SequenceNumber)
				retries++
				if ds.noTable {
					_ = noTableDelay.Wait(read, retries)
				} else {
					_ = retryDelay.Wait(read, retries)
				}
				continue
			}
			retries = 0
		}
		if abandoned() {
			return
		}
		if b.Finished {
			if cp.wait() != nil && h.isLost() {
				return
			}
			r.shardEnd(proc, rd, h)
			return
		}
		if last := b.Last(); last != "" {
			// the previous checkpoint had this whole batch to land
			if cp.wait() != nil && h.isLost() {
				return
			}
			cp.start(last)
		}
	}
	if abandoned() {
		return
	}
	if cp.wait() != nil && !h.isLost() {
		cp.retry() // the last checkpoint failed: once more before the release
	}
	r.finish(proc, h)
}

// shardEnd checkpoints a shard read to its end, creates the leases of its
// children (DescribeStream's child filter, or for Kinesis the children
// GetRecords named or ListShards after the shard: no listing of the whole
// stream) with all their parents (two after a merge), and releases its
// lease; a quick lease round then takes the children, this worker's share
// of them at once, the others at their workers' next rounds. A child is taken by nobody before each of its
// parents' checkpoints is SHARD_END (lease.Available).
func (r *Reader) shardEnd(proc context.Context, rd feed.Source, h *held) {
	shard := h.get().Key
	if err := r.checkpoint(proc, h, lease.ShardEnd); err != nil {
		r.finish(proc, h)
		return
	}
	r.log.Info("shard finished", "shard", shard)
	kids, err := rd.Children(proc, shard)
	if err != nil {
		r.log.Warn("looking up a finished shard's children failed; the next full lease round finds them", "shard", shard, "err", why(err))
	}
	for _, k := range kids {
		if _, err := r.leases.Create(proc, rd.StreamArn(), k.ID, k.Parents()); err != nil {
			r.log.Warn("creating a child shard's lease failed; the next full lease round does", "shard", k.ID, "parent", shard, "err", why(err))
			continue
		}
		r.mu.Lock()
		r.listed[k.ID] = true
		r.mu.Unlock()
	}
	r.finish(proc, h)
	select { // its children may start now
	case r.kick <- struct{}{}:
	default:
	}
}

// checkpoint stores the shard's checkpoint in its lease.
func (r *Reader) checkpoint(ctx context.Context, h *held, ckpt string) error {
	err := r.write(ctx, h, func(l lease.Lease) (lease.Lease, error) { return r.leases.Checkpoint(ctx, l, ckpt) })
	if errors.Is(err, lease.ErrLost) {
		r.logLost(ctx, h.get().Key)
	} else if err != nil {
		r.log.Warn("checkpointing failed", "shard", h.get().Key, "checkpoint", ckpt, "err", why(err))
	}
	return err
}

// finish releases the lease (unless lost), so another worker, or this one
// for a finished shard's children, takes the shard over at once.
func (r *Reader) finish(ctx context.Context, h *held) {
	err := r.write(ctx, h, func(l lease.Lease) (lease.Lease, error) { return r.leases.Release(ctx, l) })
	if err != nil && !errors.Is(err, lease.ErrLost) {
		r.log.Warn("releasing a lease failed; it expires instead", "shard", h.get().Key, "err", why(err))
	}
}

// trimmed applies the trimmed-data policy; it reports whether the shard's
// reading ends.
func (r *Reader) trimmed(proc context.Context, h *held, it feed.ShardReader, te *feed.TrimmedError) bool {
	if r.sc.OnTrimmed != "continue" {
		err := fmt.Errorf("stopping (sidecar.onTrimmed is \"stop\"): rebuild the read models from the event store (`host rebuild`), or set sidecar.onTrimmed to \"continue\" to read on and record the projections to rebuild: %w", te)
		r.log.Error("stream records lost", "shard", te.Shard, "err", te)
		r.setFatal(err)
		r.finish(proc, h)
		select { // the run stops at once
		case r.kick <- struct{}{}:
		default:
		}
		return true
	}
	projections := r.h.Projections()
	r.log.Error("stream records lost; reading on from the oldest record kept; rebuild these projections from the event store",
		"shard", te.Shard, "position", te.Position.String(), "gone", te.Gone, "projections", projections)
	r.flagRebuild(te, projections)
	if te.Gone {
		if r.checkpoint(proc, h, lease.ShardEnd) == nil {
			r.finish(proc, h)
		}
		return true
	}
	it.Seek("")
	return false
}

// flagRebuild appends a line naming the projections to rebuild to the
// state file, when one is configured.
func (r *Reader) flagRebuild(te *feed.TrimmedError, projections []string) {
	if r.sc.StateFile == "" {
		return
	}
	line, _ := json.Marshal(map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "action": "rebuild",
		"stream": te.Stream, "shard": te.Shard, "position": te.Position.String(), "projections": projections})
	r.mu.Lock()
	defer r.mu.Unlock()
	f, loose, err := privfile.OpenAppend(r.sc.StateFile) // 0600: it names shards and positions of the stream
	loose.Log(r.log)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		r.log.Error("recording the projections to rebuild failed", "file", r.sc.StateFile, "err", why(err))
	}
}

// readAhead is the iterator's next batch, read in the background while the
// current one is processed, so the reader's own calls overlap the host's
// work (the KCL prefetches likewise). The iterator is used by nobody else
// until wait returns.
type readAhead struct {
	done chan struct{}
	b    feed.Batch
	err  error
}

func readNext(ctx context.Context, it feed.ShardReader) *readAhead {
	a := &readAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.b, a.err = it.Next(ctx)
	}()
	return a
}

// wait returns the batch read; on a nil readAhead it does nothing.
func (a *readAhead) wait() (feed.Batch, error) {
	if a == nil {
		return feed.Batch{}, nil
	}
	<-a.done
	return a.b, a.err
}

// written is when rec was written to the stream; for a record that does
// not say, now less behind (the shard's iterator age).
func written(rec host.Record, behind time.Duration) time.Time {
	if t := rec.DynamoDB.ApproximateCreationDateTime; !t.IsZero() {
		return t
	}
	return time.Now().Add(-behind)
}
