package host

import "errors"

// Counts sums up one projection's part of a batch, for metrics.
type Counts struct {
	Applied, AlreadyApplied int // events folded (gap-filled ones included); redelivered events the rows had
	RowsWritten, RowsFailed int
	Retries                 int // row write attempts beyond the first (lost conditional-write races)
	GapReads, GapEvents     int // stream instances gap-filled from the event store; events read so
	Conflicts               int // rows failed on a lost race or a checkpoint conflict between sources
	NewRowsExisting         int // rows written without a read as new ones that were there already (Outcome.Existed)
}

// Counts sums up the projection's part of the batch (zero for a projection
// the batch did not touch). Gap-filled events are the applied events that
// were not in the batch.
func (r *Result) Counts(projection string) Counts {
	pr, ok := r.Projections[projection]
	if !ok {
		return Counts{}
	}
	type ev struct {
		stream, id string
		version    uint64
	}
	inBatch := make(map[ev]bool, len(r.Events))
	for _, e := range r.Events {
		inBatch[ev{e.Stream, e.StreamID, e.Version}] = true
	}
	var c Counts
	for i := range pr.Rows {
		row := &pr.Rows[i]
		extra := row.Attempts - 1
		if row.Existed {
			c.NewRowsExisting++
			extra-- // the write without a read was no race
		}
		c.Retries += max(extra, 0)
		if row.Failed() {
			c.RowsFailed++
			if errors.Is(row.Err, ErrConcurrentModification) || errors.Is(row.Err, ErrProjectionSourceConflict) {
				c.Conflicts++
			}
			continue
		}
		if row.Written {
			c.RowsWritten++
		}
		for _, in := range row.Instances {
			c.Applied += len(in.Applied)
			c.AlreadyApplied += len(in.AlreadyApplied)
			gap := 0
			for _, a := range in.Applied {
				if !inBatch[ev{a.Stream, a.StreamID, a.Version}] {
					gap++
				}
			}
			if gap > 0 {
				c.GapReads++
				c.GapEvents += gap
			}
		}
	}
	return c
}
