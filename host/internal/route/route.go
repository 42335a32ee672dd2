// Package route sends each decoded event to every projection that reads its
// stream: one feed, several projections, each record decoded once.
// Streams named for side effects only come back as Unrouted.
package route

import (
	"sort"

	"github.com/dynafold/dynafold/host/internal/apply"
)

// Event is a decoded event with its record's position in the batch: the
// engine's input, so routed events go to ApplyBatch as they are.
type Event = apply.Input

// Table is a routing table: which projections read which stream, and which
// streams are named for side effects.
type Table struct {
	byStream    map[string][]string
	sideEffects map[string]bool
	one         bool // a single projection reads every stream routed
}

// New returns a routing table. projections maps a projection's name to the
// streams it reads; sideEffects names streams whose events the caller wants
// back, decoded, whether or not a projection reads them.
func New(projections map[string][]string, sideEffects []string) *Table {
	t := &Table{byStream: map[string][]string{}, sideEffects: map[string]bool{}}
	names := make([]string, 0, len(projections))
	for n := range projections {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, s := range projections[n] {
			t.byStream[s] = append(t.byStream[s], n)
		}
	}
	for _, s := range sideEffects {
		t.sideEffects[s] = true
	}
	t.one = len(projections) == 1
	return t
}

// Routed is the result of routing a batch.
type Routed struct {
	// ByProjection holds each projection's events, in record order.
	ByProjection map[string][]Event
	// Unrouted holds the events of streams named for side effects.
	Unrouted []Event
}

// Route sends every event to each projection of its stream.
func (t *Table) Route(events []Event) Routed {
	r := Routed{ByProjection: map[string][]Event{}}
	for _, ev := range events {
		for _, p := range t.byStream[ev.Event.Stream] {
			evs := r.ByProjection[p]
			if evs == nil && t.one {
				// The one projection gets at most every event: no growth.
				evs = make([]Event, 0, len(events))
			}
			r.ByProjection[p] = append(evs, ev)
		}
		if t.sideEffects[ev.Event.Stream] {
			r.Unrouted = append(r.Unrouted, ev)
		}
	}
	return r
}
