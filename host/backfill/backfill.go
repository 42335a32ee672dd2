// Package backfill rebuilds a whole read model from the event store: a
// parallel Scan of the event table finds the instances of every stream the
// projection's sources read, and a pool of workers rebuilds every row they
// feed, while the live change feed may keep writing the same rows. When one
// instance feeds each row (one source, a checkpoint field), the rows are
// rebuilt instance by instance (Host.RebuildInstance). Otherwise the
// backfill first finds every instance that feeds each row (the rows each
// instance's events address), then rebuilds each row once, from all of them
// and every other instance the row names (Host.RebuildRowAll): no source's
// part or checkpoint is lost, and a row that only the second or third
// source feeds is found too.
//
// The live feed and the backfill never fight, and no effect is committed
// twice. Each row's rebuild is one write conditioned on the row as read
// (its revision): a live write between the rebuild's read and its write
// makes the rebuild read the row again and redo its fold. The rebuild folds
// the events the row has already considered (up to its checkpoints, as the
// row holds them when the write is decided: the watermark) without their
// effects, and applies the events after them as a delivery would, effects
// included, so an event the live feed applies meanwhile is never applied
// twice and a checkpoint never steps back. After the rebuild, the row is
// caught up from the checkpoints it holds then (Host.CatchUpRow) when events
// arrived meanwhile, through the same guarded path. A row the table does
// not hold yet (a new table, a new read model) is history: rebuilt without
// effects.
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
// the work (the stream instances, or the rows of a projection whose rows
// several instances feed), Add after each is rebuilt, Finish at the end. A
// Progress with a method Unit(string) is told first what Start's total
// counts ("stream instances" or "rows").
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

// Failure is a stream instance the backfill could not rebuild a row of, or
// an item of the event table that names no instance (StreamID empty; Err
// matches host.ErrEventDecode and names the item's key).
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
	CaughtUp int // rows brought up to their head after their rebuild (events arrived meanwhile)
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
		err := h.ScanStreamIDs(ctx, stream, o.Segments, o.Since, func(id string) { ids = append(ids, id) })
		var items *host.EventItemsError
		switch {
		case errors.As(err, &items):
			// Items that name no instance are reported, never folded;
			// the instances of the others are rebuilt.
			for _, ie := range items.Items {
				rep.Failed = append(rep.Failed, Failure{Source: sourceOf(sources, stream), Err: ie})
			}
		case err != nil:
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
	one, err := h.OneInstancePerRow(o.Projection)
	if err != nil {
		return rep, err
	}
	var r run
	if one {
		r = byInstance(h, o, sources, refs)
	} else {
		r, err = byRow(ctx, h, o, refs)
		if err != nil {
			return rep, err
		}
	}
	if o.Progress != nil {
		if u, ok := o.Progress.(interface{ Unit(string) }); ok {
			u.Unit(r.unit)
		}
		o.Progress.Start(r.total)
		defer o.Progress.Finish()
	}
	var (
		next         atomic.Int64
		rows, caught atomic.Int64
		mu           sync.Mutex
		wg           sync.WaitGroup
	)
	for range min(o.Workers, max(r.total, 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= r.total {
					return
				}
				n, up, fails := r.do(ctx, i)
				rows.Add(int64(n))
				caught.Add(int64(up))
				for _, f := range fails {
					o.Logger.Warn("backfill: stream instance failed", "projection", o.Projection, "source", f.Source, "id", f.StreamID, "err", f.Err.Error())
				}
				mu.Lock()
				rep.Failed = append(rep.Failed, fails...)
				mu.Unlock()
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
		return rep, failedErr(rep)
	}
	return rep, nil
}

// failedErr is the error of a backfill that had failures: how many
// instances failed and how many event items named none, and the first.
func failedErr(rep Report) error {
	var instances, items int
	for _, f := range rep.Failed {
		if f.StreamID == "" {
			items++
		} else {
			instances++
		}
	}
	f := rep.Failed[0]
	first := f.Source + "#" + f.StreamID
	if f.StreamID == "" {
		first = "an item of " + f.Source
	}
	what := fmt.Sprintf("%d of %d instances of %v", instances, rep.Streams, rep.Scanned)
	if items > 0 {
		what += fmt.Sprintf(", %d event items that name no instance", items)
	}
	return fmt.Errorf("%w: %s (first: %s: %w); run the backfill again once the cause is fixed", ErrFailed, what, first, f.Err)
}

// run is the work of a backfill: total units (of unit), done one by one by
// do, which returns the rows it wrote, those it caught up and what failed.
type run struct {
	unit  string
	total int
	do    func(ctx context.Context, i int) (written, caughtUp int, failed []Failure)
}

// byInstance rebuilds the rows of each instance in turn: for projections
// whose rows one instance feeds, the rows of two instances never overlap.
func byInstance(h *host.Host, o Options, sources []host.SourceRef, refs []host.InstanceRef) run {
	return run{unit: "stream instances", total: len(refs), do: func(ctx context.Context, i int) (int, int, []Failure) {
		ref := refs[i]
		outs, err := h.RebuildInstance(ctx, o.Projection, ref)
		written, caught := 0, 0
		var watermark uint64
		for _, out := range outs {
			if out.Written {
				written++
			}
			for _, in := range out.Instances {
				if in.Source == ref.Source && in.StreamID == ref.StreamID {
					watermark = max(watermark, in.Version)
				}
			}
		}
		if err != nil {
			return written, 0, []Failure{{Source: ref.Source, StreamID: ref.StreamID, Err: err}}
		}
		head, err := h.Head(ctx, streamOf(sources, ref.Source), ref.StreamID)
		if err != nil {
			return written, 0, []Failure{{Source: ref.Source, StreamID: ref.StreamID, Err: err}}
		}
		if head <= watermark {
			return written, 0, nil
		}
		// Events arrived past what the rebuild folded: bring the rows up
		// from the checkpoints they hold now.
		for _, out := range outs {
			c, err := h.CatchUpRow(ctx, o.Projection, out.Key, ref)
			if err != nil {
				return written, caught, []Failure{{Source: ref.Source, StreamID: ref.StreamID, Err: err}}
			}
			if c.Written {
				written++
				caught++
			}
		}
		return written, caught, nil
	}}
}

// byRow first finds, for every row, the instances that feed it (the rows
// each instance's events address), then rebuilds each row once from all of
// them, and catches it up from the checkpoints it holds then.
func byRow(ctx context.Context, h *host.Host, o Options, refs []host.InstanceRef) (run, error) {
	type rowRefs struct {
		key  abi.Item
		refs []host.InstanceRef
	}
	var (
		mu    sync.Mutex
		index = map[string]int{}
		rows  []*rowRefs
		fails []Failure
		next  atomic.Int64
		wg    sync.WaitGroup
	)
	for range min(o.Workers, max(len(refs), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(refs) {
					return
				}
				ref := refs[i]
				keys, err := h.RowsOf(ctx, o.Projection, ref)
				mu.Lock()
				if err != nil {
					fails = append(fails, Failure{Source: ref.Source, StreamID: ref.StreamID, Err: err})
				}
				for _, k := range keys {
					ks := keyString(k)
					j, ok := index[ks]
					if !ok {
						j, index[ks] = len(rows), len(rows)
						rows = append(rows, &rowRefs{key: k})
					}
					rows[j].refs = append(rows[j].refs, ref)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return run{}, fmt.Errorf("backfill of %s interrupted: %w", o.Projection, err)
	}
	return run{unit: "rows", total: len(rows) + len(fails), do: func(ctx context.Context, i int) (int, int, []Failure) {
		if i >= len(rows) { // an instance whose rows could not be found
			return 0, 0, fails[i-len(rows) : i-len(rows)+1]
		}
		r := rows[i]
		failed := func(err error) []Failure {
			return []Failure{{Source: r.refs[0].Source, StreamID: r.refs[0].StreamID, Err: fmt.Errorf("row %s: %w", keyString(r.key), err)}}
		}
		out, err := h.RebuildRowAll(ctx, o.Projection, r.key, r.refs...)
		if err != nil {
			return 0, 0, failed(err)
		}
		written := 0
		if out.Written {
			written++
		}
		c, err := h.CatchUpRow(ctx, o.Projection, r.key)
		if err != nil {
			return written, 0, failed(err)
		}
		if c.Written {
			return written + 1, 1, nil
		}
		return written, 0, nil
	}}, nil
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

// sourceOf returns the first source reading stream.
func sourceOf(sources []host.SourceRef, stream string) string {
	for _, s := range sources {
		if s.Stream == stream {
			return s.Name
		}
	}
	return ""
}
