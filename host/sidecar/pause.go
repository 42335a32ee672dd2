package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// ErrUnknownProjection is matched by SetPaused's error for a projection the
// configuration does not define.
var ErrUnknownProjection = host.ErrUnknownProjection

// SetPaused pauses (paused true) or resumes a projection across the whole
// fleet of cfg's sidecar: the state is written to the lease table, and
// every worker reads it at its next lease round (within a third of
// sidecar.leaseDuration). While paused, the workers apply none of the
// projection's events, the other projections of the feed go on, and the
// stream instances it skipped are recorded in the lease table; once it
// resumes, the workers catch each of them up from the event store and
// delete its record. by names who did it; reason is kept for the status.
// client may be nil: it is then built from the configuration.
func SetPaused(ctx context.Context, cfg *host.Config, client *dynamodb.Client, projection string, paused bool, by, reason string) error {
	if cfg.Sidecar == nil {
		return errors.New(`configuration: no "sidecar" section: the pause is kept in the lease table; add {"sidecar": {"leaseTable": "dynafold-leases"}}`)
	}
	if !slices.ContainsFunc(cfg.Projections, func(p host.ProjectionConfig) bool { return p.Name == projection }) {
		var names []string
		for _, p := range cfg.Projections {
			names = append(names, p.Name)
		}
		return fmt.Errorf("%w %q: the configuration has %v", ErrUnknownProjection, projection, names)
	}
	client, _, err := clients(ctx, cfg, client, nil)
	if err != nil {
		return err
	}
	return lease.NewTable(client, cfg.EffectiveSidecar().LeaseTable).SetPaused(ctx, projection, paused, by, reason)
}

// pauses is what a reader keeps of the lease table's control items.
type pauses struct {
	mu        sync.Mutex
	deferred  map[string]int // per projection: stream instances waiting to be caught up
	published time.Time      // when the worker status was last written
	catching  bool           // a catch-up is running
}

// applyControls takes the lease round's control items: it pauses and
// resumes the host's projections as the table says, publishes this
// worker's status, and, when this worker is the first of the live ones by
// id, catches up the stream instances of resumed projections.
func (r *Reader) applyControls(ctx context.Context, all []lease.Lease, ctl lease.Controls, expired func(lease.Lease) bool) {
	for _, p := range r.h.Projections() {
		want := ctl.Paused(p)
		if want == r.h.IsPaused(p) {
			continue
		}
		pa := ctl.Pauses[p]
		if want {
			_ = r.h.Pause(p)
			r.log.Warn("projection paused: its events are recorded, not applied, until it resumes", "projection", p, "by", pa.By, "reason", pa.Reason)
		} else {
			_ = r.h.Resume(p)
			r.log.Info("projection resumed: the stream instances it skipped are caught up from the event store", "projection", p, "by", pa.By)
		}
	}
	counts := map[string]int{}
	var todo []lease.Deferred
	for _, d := range ctl.Deferred {
		counts[d.Projection]++
		if !ctl.Paused(d.Projection) && slices.Contains(r.h.Projections(), d.Projection) {
			todo = append(todo, d)
		}
	}
	r.pause.mu.Lock()
	r.pause.deferred = counts
	publish := time.Since(r.pause.published) >= r.renewEvery()
	if publish {
		r.pause.published = time.Now()
	}
	start := len(todo) > 0 && !r.pause.catching && r.first(all, expired)
	if start {
		r.pause.catching = true
	}
	r.pause.mu.Unlock()
	if publish && r.opts.Status != nil {
		r.publish(ctx)
	}
	if start {
		go r.catchUp(ctx, todo)
	}
}

// first reports whether this worker comes first by id among the live
// owners of leases and itself: that one catches up what paused projections
// skipped (two that both think so only repeat idempotent work).
func (r *Reader) first(all []lease.Lease, expired func(lease.Lease) bool) bool {
	me := r.sc.WorkerID
	for _, l := range all {
		if l.Owner != "" && l.Owner < me && !expired(l) {
			return false
		}
	}
	return true
}

// Deferred returns, per projection, the stream instances a paused
// projection skipped that wait to be caught up, as of the last lease round.
func (r *Reader) Deferred() map[string]int {
	r.pause.mu.Lock()
	defer r.pause.mu.Unlock()
	out := make(map[string]int, len(r.pause.deferred))
	for k, v := range r.pause.deferred {
		out[k] = v
	}
	return out
}

// catchUp brings every row of the recorded stream instances up to the
// event store's head, a few at a time, and deletes each record caught up
// (unless recorded again meanwhile: the next round takes it).
func (r *Reader) catchUp(ctx context.Context, todo []lease.Deferred) {
	defer func() {
		r.pause.mu.Lock()
		r.pause.catching = false
		r.pause.mu.Unlock()
	}()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var done, failed int
	var mu sync.Mutex
	for _, d := range todo {
		if ctx.Err() != nil || r.h.IsPaused(d.Projection) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := r.catchUpInstance(ctx, d)
			if err == nil {
				_, err = r.leases.DoneDeferred(ctx, d)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if ctx.Err() == nil {
					r.log.Warn("catching up a stream instance a paused projection skipped failed; the next lease round tries again",
						"projection", d.Projection, "stream", d.Stream, "streamId", d.StreamID, "err", why(err))
				}
				return
			}
			done++
		}()
	}
	wg.Wait()
	if done > 0 || failed > 0 {
		r.log.Info("caught up the stream instances resumed projections skipped", "caughtUp", done, "failed", failed)
	}
}

// catchUpInstance catches up every row of the projection that the stream
// instance feeds, through each source of the projection reading its
// stream.
func (r *Reader) catchUpInstance(ctx context.Context, d lease.Deferred) error {
	srcs, err := r.h.ProjectionSources(d.Projection)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		if s.Stream != d.Stream {
			continue
		}
		ref := host.InstanceRef{Source: s.Name, StreamID: d.StreamID}
		keys, err := r.h.RowsOf(ctx, d.Projection, ref)
		if err != nil {
			return err
		}
		t0 := time.Now()
		outs := make([]host.Outcome, 0, len(keys))
		for _, k := range keys {
			o, err := r.h.CatchUpRow(ctx, d.Projection, k, ref)
			if err != nil {
				r.observeCaughtUp(d.Projection, outs, time.Since(t0))
				return err
			}
			outs = append(outs, o)
		}
		r.observeCaughtUp(d.Projection, outs, time.Since(t0))
	}
	return nil
}

// observeCaughtUp counts the rows a catch-up applied as a batch's are
// counted (events applied, rows written, the freshness of each event,
// late by the pause), in the metrics, the freshness objectives and the
// progress line.
func (r *Reader) observeCaughtUp(projection string, outs []host.Outcome, took time.Duration) {
	if len(outs) == 0 {
		return
	}
	res := host.OutcomesResult(projection, outs)
	r.mu.Lock()
	arn := r.arn
	r.mu.Unlock()
	r.obs.BatchProcessed(arn, "", res, took, nil)
	r.countWritten(res)
	r.failures.Add(int64(len(res.Failed())))
}

// recordDeferred records in the lease table the stream instances of the
// events each paused projection left unapplied in a batch, before the
// batch is checkpointed.
func (r *Reader) recordDeferred(ctx context.Context, res *host.Result) error {
	var ds []lease.Deferred
	for name, pr := range res.Projections {
		if !pr.Paused {
			continue
		}
		seen := map[[2]string]bool{}
		for _, ev := range pr.Deferred {
			k := [2]string{ev.Stream, ev.StreamID}
			if !seen[k] {
				seen[k] = true
				ds = append(ds, lease.Deferred{Projection: name, Stream: ev.Stream, StreamID: ev.StreamID})
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	if err := r.leases.Defer(ctx, ds); err != nil {
		return fmt.Errorf("the batch is delivered again: %w", err)
	}
	return nil
}

// workerStatus is what a worker publishes in the lease table for `host
// status`.
type workerStatus struct {
	Freshness []host.FreshnessReport `json:"freshness,omitempty"`
	// Plugins are the plugin versions serving each projection
	// ("name@version" by projection): a rolling deploy shows which worker
	// runs which.
	Plugins map[string]string `json:"plugins,omitempty"`
}

// publish writes this worker's status (its last hour of freshness) on a
// lease it holds (none held: nothing to write on, and nothing applied).
func (r *Reader) publish(ctx context.Context) {
	r.mu.Lock()
	var shard string
	for id := range r.held {
		if shard == "" || id < shard {
			shard = id
		}
	}
	r.mu.Unlock()
	if shard == "" {
		return
	}
	st := workerStatus{Freshness: r.opts.Status(), Plugins: map[string]string{}}
	for _, p := range r.h.Projections() {
		if name, version, err := r.h.PluginVersion(p); err == nil {
			st.Plugins[p] = name + "@" + version
		}
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = r.leases.PutWorkerStatus(ctx, shard, r.sc.WorkerID, string(b))
	}
	if err != nil && ctx.Err() == nil {
		r.log.Warn("publishing the worker's status in the lease table failed", "err", why(err))
	}
}

// FleetProjection is one projection in the fleet view: whether it is
// paused, the stream instances it skipped that wait to be caught up, and
// its freshness over the last hour, summed over the workers that published
// theirs.
type FleetProjection struct {
	Name      string
	Paused    bool
	ChangedAt time.Time // when it was last paused or resumed (zero: never)
	By        string
	Reason    string
	Deferred  int                   // stream instances waiting to be caught up
	Freshness *host.FreshnessReport // nil when no worker published one
	Workers   int                   // workers whose freshness is summed
}

// projectionsOf builds the fleet's projections from the configuration and
// the lease table's control items; a worker's freshness counts when it was
// published within its window.
func projectionsOf(cfg *host.Config, ctl lease.Controls, now time.Time) []FleetProjection {
	var out []FleetProjection
	idx := map[string]int{}
	add := func(name string) *FleetProjection {
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, FleetProjection{Name: name})
		}
		return &out[i]
	}
	for _, p := range cfg.Projections {
		add(p.Name)
	}
	for name, pa := range ctl.Pauses {
		fp := add(name)
		fp.Paused, fp.ChangedAt, fp.By, fp.Reason = pa.Paused, pa.At, pa.By, pa.Reason
	}
	for _, d := range ctl.Deferred {
		add(d.Projection).Deferred++
	}
	for _, w := range ctl.Workers {
		var st workerStatus
		if json.Unmarshal([]byte(w.Status), &st) != nil {
			continue
		}
		for _, rep := range st.Freshness {
			if now.Sub(w.At) > rep.Window {
				continue
			}
			fp := add(rep.Projection)
			if fp.Freshness == nil {
				r := rep
				r.Counts = slices.Clone(rep.Counts)
				fp.Freshness, fp.Workers = &r, 1
			} else if fp.Freshness.Merge(rep) {
				fp.Workers++
			}
		}
	}
	return out
}
