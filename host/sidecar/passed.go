package sidecar

import (
	"log/slog"
	"sync"
	"time"
)

// passedAgainEvery bounds how often a reader logs failures that went
// through when delivered again.
const passedAgainEvery = 30 * time.Second

// passedAgain counts the batches whose failure went through when the
// batch was delivered again in halves: counted in the failures (the
// progress line, records_failed_total), and otherwise logged nowhere.
type passedAgain struct {
	mu     sync.Mutex
	last   time.Time
	missed int // since the last line
}

// note logs reason at most once every passedAgainEvery, with how many such
// failures there were since the last line.
func (p *passedAgain) note(log *slog.Logger, shard, reason string) {
	p.mu.Lock()
	p.missed++
	now := time.Now()
	if now.Sub(p.last) < passedAgainEvery {
		p.mu.Unlock()
		return
	}
	n := p.missed
	p.last, p.missed = now, 0
	p.mu.Unlock()
	log.Warn("records failed and went through when delivered again (nothing lost; counted in the failures); the latest reason follows",
		"shard", shard, "reason", reason, "since", n, "every", passedAgainEvery.String())
}
