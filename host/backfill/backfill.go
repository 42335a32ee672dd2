// Package backfill rebuilds a whole read model from the event store: a
// parallel Scan of the event table finds the instances of every stream the
// projection's sources read, and each row they feed is rebuilt once, from
// every instance that feeds it (Host.RebuildRowAll), by a pool of workers,
// while the live change feed may keep writing the same rows.
//
// The live feed and the backfill never fight, and no effect is committed
// twice. Each row's rebuild is one write conditioned on the row as read
// (its revision): a live write between the rebuild's read and its write
// makes the rebuild read the row again and redo its fold. The rebuild folds
// the events the row has already considered (up to its checkpoints: the
// watermark, per instance, as the row holds it when the write is decided)
// without their effects, and applies the events after them as a delivery
// would, effects included, so an event the live feed applies meanwhile is
// never applied twice and a checkpoint never steps back. After the
// rebuild, when an instance's head has moved past what was folded, its rows
// are caught up from the checkpoints they hold then (Host.CatchUpRow),
// through the same guarded path. A row the table does not hold yet (a new
// table, a new read model) is history: rebuilt without effects.
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

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
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
	// Workers is the number of stream instances whose rows are rebuilt at
	// once (default DefaultWorkers).
	Workers int
	// Since, when set, rebuilds only the rows of the instances with an
	// event stored at or after it: the catch-up pass of a versioned
	// cutover.
	Since time.Time
	// Progress, when set, is told how far the backfill is.
	Progress Progress
	// Logger logs each instance that fails (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of Report.Started (default time.Now).
	Now func() time.Time
}

// Failure is a stream instance the backfill could not rebuild a row of.
type Failure struct {
	Source   string // the source reading the instance
	StreamID string
	Err      error
}

// Report is what Run did.
type Report struct {
	Projection string
	// Stream is the stream of the projection's first source; Scanned lists
	// every stream scanned (one per stream its sources read).
	Stream  string
	Scanned []string
	// Started is when the backfill began: pass it as Options.Since to the
	// catch-up pass after a cutover.
	Started  time.Time
	Streams  int // stream instances found (an instance read by two sources counts twice)
	Rows     int // rows written
	CaughtUp int // instances whose head moved during their rows' rebuild, brought up to it
	Failed   []Failure
	Took     time.Duration
}

// ErrFailed is matched by Run's error when some stream instances failed;
// Report.Failed lists them.
var ErrFailed = errors.New("backfill: some stream instances failed")

// Run rebuilds every row of the projection from the instances of its
// sources' streams; see the package documentation for how it coexists
// with the live feed.
func Run(ctx context.Context, h *host.Host, o Options) (Report, error) {
	o = defaults(o)
	rep := Report{Projection: o.Projection, Started: o.Now()}
	start := time.Now()
	sources, err := h.ProjectionSources(o.Projection)
	if err != nil {
		return rep, err
	}
	rep.Stream = sources[0].Stream
	var refs []host.InstanceRef
	for _, stream := range streamsOf(sources) {
		rep.Scanned = append(rep.Scanned, stream)
		var ids []string
		if err := h.ScanStreamIDs(ctx, stream, o.Segments, o.Since, func(id string) { ids = append(ids, id) }); err != nil {
			return rep, err
		}
		for _, src := range sources {
			if src.Stream != stream {
				continue
			}
			for _, id := range ids {
				refs = append(refs, host.InstanceRef{Source: src.Name, StreamID: id})
			}
		}
	}
	rep.Streams = len(refs)
	if o.Progress != nil {
		o.Progress.Start(len(refs))
		defer o.Progress.Finish()
	}
	var (
		next         atomic.Int64
		rows, caught atomic.Int64
		claimed      sync.Map // rows rebuilt (or being rebuilt) by this run
		mu           sync.Mutex
		wg           sync.WaitGroup
	)
	for range min(o.Workers, max(len(refs), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(refs) {
					return
				}
				ref := refs[i]
				stream := streamOf(sources, ref.Source)
				n, up, err := one(ctx, h, o.Projection, stream, ref, &claimed)
				rows.Add(int64(n))
				if up {
					caught.Add(1)
				}
				if err != nil {
					o.Logger.Warn("backfill: stream instance failed", "projection", o.Projection, "source", ref.Source, "stream", stream, "id", ref.StreamID, "err", err.Error())
					mu.Lock()
					rep.Failed = append(rep.Failed, Failure{Source: ref.Source, StreamID: ref.StreamID, Err: err})
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
		f := rep.Failed[0]
		return rep, fmt.Errorf("%w: %d of %d instances of %v (first: %s#%s: %v); run the backfill again once the cause is fixed",
			ErrFailed, len(rep.Failed), rep.Streams, rep.Scanned, f.Source, f.StreamID, f.Err)
	}
	return rep, nil
}

// streamsOf returns the distinct streams of the sources, in declaration
// order.
func streamsOf(sources []host.SourceRef) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sources {
		if !seen[s.Stream] {
			seen[s.Stream] = true
			out = append(out, s.Stream)
		}
	}
	return out
}

func streamOf(sources []host.SourceRef, name string) string {
	for _, s := range sources {
		if s.Name == name {
			return s.Stream
		}
	}
	return ""
}

// one rebuilds every row the stream instance feeds that no other instance
// of this run has claimed, each from all of its instances, then catches
// those rows up when the instance's head moved past what was folded.
func one(ctx context.Context, h *host.Host, projection, stream string, ref host.InstanceRef, claimed *sync.Map) (written int, caughtUp bool, err error) {
	keys, err := h.RowsOf(ctx, projection, ref)
	if err != nil {
		return 0, false, err
	}
	var mine []abi.Item
	var watermark uint64
	var errs []error
	for _, key := range keys {
		if _, dup := claimed.LoadOrStore(keyString(key), true); dup {
			continue
		}
		mine = append(mine, key)
		o, err := h.RebuildRowAll(ctx, projection, key, ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if o.Written {
			written++
		}
		for _, in := range o.Instances {
			if in.Source == ref.Source && in.StreamID == ref.StreamID {
				watermark = max(watermark, in.Version)
			}
		}
	}
	if len(errs) > 0 || len(mine) == 0 {
		return written, false, errors.Join(errs...)
	}
	head, err := h.Head(ctx, stream, ref.StreamID)
	if err != nil || head <= watermark {
		return written, false, err
	}
	for _, key := range mine {
		o, err := h.CatchUpRow(ctx, projection, key, ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if o.Written {
			written++
		}
	}
	return written, true, errors.Join(errs...)
}

// keyString is a row key's one form, for the set of rows claimed.
func keyString(k abi.Item) string { return keys.String(k) }

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
