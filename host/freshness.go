package host

import (
	"sync"
	"time"
)

// Freshness calls each with the freshness of every event the projection
// applied in the batch (gap-filled ones included): the time from the
// change's creation to the commit of the row write that applied it. The
// creation is the record's ApproximateCreationDateTime (Event.Created);
// for an event the batch did not carry (gap-filled) or whose record did
// not say, the event's own timestamp. An event whose creation cannot be
// told is left out; a negative time (clocks apart) counts as 0. Rows that
// failed or wrote nothing contribute nothing.
func (r *Result) Freshness(projection string, each func(time.Duration)) {
	pr, ok := r.Projections[projection]
	if !ok || len(pr.Rows) == 0 {
		return
	}
	created := r.createdIndex()
	for i := range pr.Rows {
		row := &pr.Rows[i]
		if !row.Written || row.Committed.IsZero() {
			continue
		}
		for _, in := range row.Instances {
			for _, ev := range in.Applied {
				t, ok := created[eventKey{ev.Stream, ev.StreamID, ev.Version}]
				if !ok {
					var err error
					if t, err = time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
						continue
					}
				}
				each(max(row.Committed.Sub(t), 0))
			}
		}
	}
}

type eventKey struct {
	stream, id string
	version    uint64
}

// createdIndex is the creation time of every event of the batch whose
// record carried one, built once.
func (r *Result) createdIndex() map[eventKey]time.Time {
	r.createdOnce.Do(func() {
		r.created = make(map[eventKey]time.Time, len(r.Events))
		for _, e := range r.Events {
			if !e.Created.IsZero() {
				r.created[eventKey{e.Stream, e.StreamID, e.Version}] = e.Created
			}
		}
	})
	return r.created
}

// freshnessIndex is the lazily built state of Freshness, kept in Result.
type freshnessIndex struct {
	createdOnce sync.Once
	created     map[eventKey]time.Time
}
