// Package ratelimit holds a projection's rate limit: two token buckets,
// events and row writes per second, that a batch waits on before it is
// applied. The buckets are golang.org/x/time/rate's limiters, driven by a
// clock the caller may replace (tests advance a fake one as the limiter
// sleeps).
package ratelimit

import (
	"context"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// Clock is the time a Limiter reads and how it waits.
type Clock struct {
	// Now is the current time (nil: time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends (nil: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Limiter is a projection's two buckets. Its methods are safe for
// concurrent use: concurrent waits queue on the buckets in the order they
// reserve.
type Limiter struct {
	events, writes *rate.Limiter // nil: that rate is not limited
	clock          Clock
}

// New returns a limiter of eventsPerSecond and writesPerSecond (0: not
// limited), each bucket holding burst tokens (0: one second's worth of its
// rate, at least 1). It returns nil when neither rate is limited.
func New(eventsPerSecond, writesPerSecond float64, burst int, clock Clock) *Limiter {
	if eventsPerSecond <= 0 && writesPerSecond <= 0 {
		return nil
	}
	if clock.Now == nil {
		clock.Now = time.Now
	}
	if clock.Sleep == nil {
		clock.Sleep = sleep
	}
	l := &Limiter{clock: clock}
	bucket := func(perSecond float64) *rate.Limiter {
		if perSecond <= 0 {
			return nil
		}
		b := burst
		if b <= 0 {
			b = max(1, int(math.Ceil(perSecond)))
		}
		return rate.NewLimiter(rate.Limit(perSecond), b)
	}
	l.events, l.writes = bucket(eventsPerSecond), bucket(writesPerSecond)
	return l
}

// Wait takes events tokens from the events bucket and writes from the
// writes bucket, in pieces of at most a bucket's burst, sleeping as long as
// the buckets require. It returns the time it slept, and ctx's error when
// ctx ended first (the tokens not used are given back). A nil Limiter
// waits for nothing.
func (l *Limiter) Wait(ctx context.Context, events, writes int) (time.Duration, error) {
	if l == nil {
		return 0, nil
	}
	var waited time.Duration
	for _, b := range []struct {
		lim *rate.Limiter
		n   int
	}{{l.events, events}, {l.writes, writes}} {
		if b.lim == nil {
			continue
		}
		for n := b.n; n > 0; {
			k := min(n, b.lim.Burst())
			now := l.clock.Now()
			r := b.lim.ReserveN(now, k)
			if d := r.DelayFrom(now); d > 0 {
				if err := l.clock.Sleep(ctx, d); err != nil {
					r.CancelAt(l.clock.Now())
					return waited, err
				}
				waited += d
			}
			n -= k
		}
	}
	return waited, nil
}

// Rates returns the limits, per second (0: not limited), and the bursts.
func (l *Limiter) Rates() (events, writes float64, eventsBurst, writesBurst int) {
	if l == nil {
		return 0, 0, 0, 0
	}
	if l.events != nil {
		events, eventsBurst = float64(l.events.Limit()), l.events.Burst()
	}
	if l.writes != nil {
		writes, writesBurst = float64(l.writes.Limit()), l.writes.Burst()
	}
	return events, writes, eventsBurst, writesBurst
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
