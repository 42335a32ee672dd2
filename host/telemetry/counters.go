package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/host"
)

// totals are the counts the status page shows, over every stream and
// projection this process observed.
type totals struct {
	records, failures, givenUp              atomic.Int64
	applied, rejected, skipped, rowsWritten atomic.Int64
}

func (t *totals) add(c host.Counts, rejected, skipped int) {
	t.applied.Add(int64(c.Applied))
	t.rowsWritten.Add(int64(c.RowsWritten))
	t.rejected.Add(int64(rejected))
	t.skipped.Add(int64(skipped))
}

// Counters are what this process counted since it started.
type Counters struct {
	RecordsRead    int64 // change-feed records read
	RowsWritten    int64 // rows written, over the projections
	EventsApplied  int64 // events folded into rows
	EventsRejected int64 // events evolve failed on and its terminal accepted
	EventsSkipped  int64 // events evolve skipped
	Failures       int64 // records reported failed (each delivery)
	GivenUp        int64 // records given up to an on-failure destination
}

// Counters returns the counts so far.
func (m *Metrics) Counters() Counters {
	t := &m.totals
	return Counters{RecordsRead: t.records.Load(), RowsWritten: t.rowsWritten.Load(), EventsApplied: t.applied.Load(),
		EventsRejected: t.rejected.Load(), EventsSkipped: t.skipped.Load(), Failures: t.failures.Load(), GivenUp: t.givenUp.Load()}
}

// rejectedSkipped counts the events of a projection's result that evolve
// rejected (terminal accepted) and skipped.
func rejectedSkipped(pr host.ProjectionResult) (rejected, skipped int) {
	for i := range pr.Rows {
		for _, in := range pr.Rows[i].Instances {
			rejected += len(in.Rejected)
			skipped += len(in.Skipped)
		}
	}
	return rejected, skipped
}

// MarkReplayed records that the quarantine entries ids of recent failures
// are gone (replayed) as of at; a failure keeps the first time it was seen
// gone.
func (m *Metrics) MarkReplayed(ids map[string]bool, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.recent {
		f := &m.recent[i]
		if f.EntryID != "" && ids[f.EntryID] && f.Replayed.IsZero() {
			f.Replayed = at
		}
	}
}
