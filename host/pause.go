package host

import (
	"maps"
	"slices"
	"sync"
)

// pauseSet is the projections a host leaves unapplied.
type pauseSet struct {
	mu     sync.RWMutex
	paused map[string]bool
}

func (s *pauseSet) is(projection string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.paused[projection]
}

// Pause makes ProcessBatch (and ProcessRawBatch) leave the projection's
// events unapplied from the next batch on, while the other projections of
// the feed go on: its ProjectionResult is Paused, nothing is read or
// written for it, its plugin is not called, and Deferred lists the events
// it was handed. A batch acknowledged while the projection is paused
// must have its deferred stream instances kept and caught up after Resume
// (host/sidecar records them in its lease table and catches them up;
// CatchUpRow and CatchUpInstance do it by hand), else the rows those
// instances feed lag until their next event, which gap-fills them. A batch
// already running is not affected. Pausing a paused projection does
// nothing.
func (h *Host) Pause(projection string) error {
	if _, err := h.engine(projection); err != nil {
		return err
	}
	h.paused.mu.Lock()
	defer h.paused.mu.Unlock()
	if h.paused.paused == nil {
		h.paused.paused = map[string]bool{}
	}
	h.paused.paused[projection] = true
	return nil
}

// Resume applies the projection's events again from the next batch on.
// Resuming a projection that is not paused does nothing.
func (h *Host) Resume(projection string) error {
	if _, err := h.engine(projection); err != nil {
		return err
	}
	h.paused.mu.Lock()
	defer h.paused.mu.Unlock()
	delete(h.paused.paused, projection)
	return nil
}

// Paused returns the paused projections, sorted.
func (h *Host) Paused() []string {
	h.paused.mu.RLock()
	defer h.paused.mu.RUnlock()
	return slices.Sorted(maps.Keys(h.paused.paused))
}

// IsPaused reports whether the projection is paused.
func (h *Host) IsPaused(projection string) bool { return h.paused.is(projection) }
