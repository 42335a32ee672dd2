// Package backfill rebuilds a whole read model from the event store: a
// parallel Scan of the event table finds the instances of the projection's
// stream, and each is rebuilt from version 1 (Host.Rebuild) by a pool of
// workers, while the live change feed may keep writing the same rows.
//
// The live feed and the backfill never fight. The watermark is per stream
// instance: the version the rebuild folded up to (its checkpoint). Rows are
// written conditioned on what was read, so a live write that lands between
// the rebuild's read and its write makes the rebuild read again; after the
// rebuild, the stream's head is read again, and when events arrived past
// the watermark the row is brought up to the head through the ordinary
// guarded apply path (Host.CatchUp), which never folds an event twice and
// never steps a row back. A row can therefore only lag for the moment
// between the rebuild's write and that catch-up, and ends equal to the
// sequential fold of its stream.
//
// For a versioned cutover, build a host whose configuration names a new
// table for the projection, backfill it while the old table keeps serving,
// switch the projection's table in the configuration, then backfill again
// with Since set to the first backfill's start to bring in what arrived
// meanwhile (see docs/operations.md).
package backfill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/host"
)

// Defaults of Options.
const (
	DefaultSegments = 4
	DefaultWorkers  = 4
)

// Progress is told how far a backfill is: Start once the scan has found
// every stream instance, Add after each is rebuilt, Finish at the end.
type Progress interface {
	Start(total int)
	Add(n int)
	Finish()
}

// Options configures Run.
type Options struct {
	// Projection is the projection to rebuild (required).
	Projection string
	// Segments is the number of parallel Scan segments (default
	// DefaultSegments).
	Segments int
	// Workers is the number of stream instances rebuilt at once (default
	// DefaultWorkers).
	Workers int
	// Since, when set, rebuilds only the instances with an event stored at
	// or after it: the catch-up pass of a versioned cutover.
	Since time.Time
	// Progress, when set, is told how far the backfill is.
	Progress Progress
	// Logger logs each instance that fails (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of Report.Started (default time.Now).
	Now func() time.Time
}

// Failure is a stream instance the backfill could not rebuild.
type Failure struct {
	StreamID string
	Err      error
}

// Report is what Run did.
type Report struct {
	Projection string
	Stream     string
	// Started is when the backfill began: pass it as Options.Since to the
	// catch-up pass after a cutover.
	Started  time.Time
	Streams  int // stream instances found
	Rows     int // rows written
	CaughtUp int // instances whose head moved during their rebuild, brought up to it
	Failed   []Failure
	Took     time.Duration
}

// ErrFailed is matched by Run's error when some stream instances failed;
// Report.Failed lists them.
var ErrFailed = errors.New("backfill: some stream instances failed")

// Run rebuilds every instance of the projection's stream; see the package
// documentation for how it coexists with the live feed.
func Run(ctx context.Context, h *host.Host, o Options) (Report, error) {
	o = defaults(o)
	rep := Report{Projection: o.Projection, Started: o.Now()}
	start := time.Now()
	stream, err := h.ProjectionStream(o.Projection)
	if err != nil {
		return rep, err
	}
	rep.Stream = stream
	var ids []string
	if err := h.ScanStreamIDs(ctx, stream, o.Segments, o.Since, func(id string) { ids = append(ids, id) }); err != nil {
		return rep, err
	}
	rep.Streams = len(ids)
	if o.Progress != nil {
		o.Progress.Start(len(ids))
		defer o.Progress.Finish()
	}
	var (
		next         atomic.Int64
		rows, caught atomic.Int64
		mu           sync.Mutex
		wg           sync.WaitGroup
	)
	for range min(o.Workers, max(len(ids), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				n, up, err := one(ctx, h, o.Projection, stream, ids[i])
				rows.Add(int64(n))
				if up {
					caught.Add(1)
				}
				if err != nil {
					o.Logger.Warn("backfill: stream instance failed", "projection", o.Projection, "stream", stream, "id", ids[i], "err", err.Error())
					mu.Lock()
					rep.Failed = append(rep.Failed, Failure{StreamID: ids[i], Err: err})
					mu.Unlock()
				}
				if o.Progress != nil {
					o.Progress.Add(1)
				}
			}
		})
	}
	wg.Wait()
	rep.Rows, rep.CaughtUp, rep.Took = int(rows.Load()), int(caught.Load()), time.Since(start)
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("backfill of %s interrupted: %w", o.Projection, err)
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("%w: %d of %d instances of %s (first: %s: %v); run the backfill again once the cause is fixed",
			ErrFailed, len(rep.Failed), rep.Streams, stream, rep.Failed[0].StreamID, rep.Failed[0].Err)
	}
	return rep, nil
}

// one rebuilds one stream instance, then brings its row up to the head if
// events arrived past what the rebuild folded.
func one(ctx context.Context, h *host.Host, projection, stream, id string) (written int, caughtUp bool, err error) {
	outs, err := h.Rebuild(ctx, projection, id)
	var watermark uint64
	for _, o := range outs {
		if o.Written {
			written++
		}
		for _, in := range o.Instances {
			if in.StreamID == id {
				watermark = max(watermark, in.Version)
			}
		}
	}
	if err != nil {
		return written, false, err
	}
	head, err := h.Head(ctx, stream, id)
	if err != nil || head <= watermark {
		return written, false, err
	}
	o, err := h.CatchUp(ctx, projection, id)
	if errors.Is(err, host.ErrNoRow) {
		return written, false, nil
	}
	if o.Written {
		written++
	}
	return written, true, err
}

func defaults(o Options) Options {
	if o.Segments <= 0 {
		o.Segments = DefaultSegments
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
