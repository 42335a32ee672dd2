package swap

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Results of an Event.
const (
	ResultLoaded   = "loaded"   // the first version, at start
	ResultSwapped  = "swapped"  // a new version swapped in
	ResultRollback = "rollback" // an earlier version swapped back in by Rollback
	ResultRefused  = "refused"  // a candidate refused by the pipeline; the version serving kept serving
	ResultFallback = "fallback" // at start, the module was refused and an archived version serves instead
)

// DefaultEvents is how many events a Swapper keeps (Events).
const DefaultEvents = 20

// Event is one thing that happened to a Swapper's versions, for status
// pages: a version loaded, swapped in or rolled back to, a candidate
// refused (with the step and why), a fallback to an archived version.
type Event struct {
	Time   time.Time
	Result string // ResultLoaded, ResultSwapped, ResultRollback, ResultRefused or ResultFallback
	Plugin string // "name@version" of the version concerned; "" for a refused module that did not load
	SHA256 string // its module's digest
	Origin string // where it came from
	Step   string // for a refusal, the step that refused it
	Reason string // for a refusal, why; for a fallback, why the module was not served
}

// history is a Swapper's last events and its fallback count.
type history struct {
	mu        sync.Mutex
	ring      []Event
	next      int
	fallbacks atomic.Uint64
}

func (h *history) add(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ring) < DefaultEvents {
		h.ring = append(h.ring, e)
		return
	}
	h.ring[h.next] = e
	h.next = (h.next + 1) % DefaultEvents
}

// refusal is the event of a refused candidate.
func refusal(err error) Event {
	e := Event{Result: ResultRefused, Step: StepUnknown, Reason: err.Error()}
	var ce *CandidateError
	if errors.As(err, &ce) {
		e.Plugin, e.SHA256, e.Origin, e.Step, e.Reason = ce.Plugin, ce.SHA256, ce.Origin, ce.Step, ce.Err.Error()
	}
	return e
}

// Events returns the last DefaultEvents events, newest first.
func (s *Swapper) Events() []Event {
	h := &s.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Event, 0, len(h.ring))
	for i := range h.ring {
		out = append(out, h.ring[(h.next+len(h.ring)-1-i)%len(h.ring)])
	}
	return out
}

// Fallbacks is how many times the Swapper started on an archived version
// because the module offered at start was refused (0 or 1).
func (s *Swapper) Fallbacks() uint64 { return s.hist.fallbacks.Load() }

// installed is the event of a version made current.
func installed(info Info, replaced, rollback bool) Event {
	e := Event{Time: info.Since, Result: ResultLoaded, Plugin: info.Plugin, SHA256: info.SHA256, Origin: info.Origin}
	switch {
	case rollback:
		e.Result = ResultRollback
	case replaced:
		e.Result = ResultSwapped
	}
	return e
}
