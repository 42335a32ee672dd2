package backfill

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Lines is a Progress for logs and pipes: one line every interval (and one
// at the end) with the count, the rate and the estimated time left.
type Lines struct {
	w        io.Writer
	every    time.Duration
	mu       sync.Mutex
	unit     string
	total    int
	done     int
	start    time.Time
	last     time.Time
	finished bool
}

// NewLines returns a Lines writing to w at most once per every (default
// 5 s).
func NewLines(w io.Writer, every time.Duration) *Lines {
	if every <= 0 {
		every = 5 * time.Second
	}
	return &Lines{w: w, every: every}
}

// Unit sets what Start's total counts (default "stream instances").
func (l *Lines) Unit(unit string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unit = unit
}

// Start implements Progress.
func (l *Lines) Start(total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total, l.start, l.last = total, time.Now(), time.Now()
	if l.unit == "" {
		l.unit = "stream instances"
	}
	fmt.Fprintf(l.w, "backfill: %d %s to rebuild\n", total, l.unit)
}

// Add implements Progress.
func (l *Lines) Add(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done += n
	if time.Since(l.last) >= l.every {
		l.last = time.Now()
		l.line()
	}
}

// Finish implements Progress.
func (l *Lines) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.finished {
		l.finished = true
		l.line()
	}
}

func (l *Lines) line() {
	el := time.Since(l.start)
	rate := float64(l.done) / max(el.Seconds(), 1e-9)
	pct := 100.0
	if l.total > 0 {
		pct = 100 * float64(l.done) / float64(l.total)
	}
	eta := "-"
	if rate > 0 && l.done < l.total {
		eta = time.Duration(float64(l.total-l.done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(l.w, "backfill: %d/%d (%.0f%%), %.1f/s, elapsed %s, ETA %s\n", l.done, l.total, pct, rate, el.Round(time.Second), eta)
}
