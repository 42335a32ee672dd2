package deliver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The defaults of BreakerOptions.
const (
	// DefaultBreakerFailures is how many deliveries in a row must fail to
	// open a breaker.
	DefaultBreakerFailures = 5
	// DefaultBreakerCooldown is how long a breaker stays open before it
	// lets one delivery through to probe the destination.
	DefaultBreakerCooldown = 30 * time.Second
	// DefaultBreakerWindow is the window a failure rate is measured over.
	DefaultBreakerWindow = time.Minute
	// DefaultBreakerMinDeliveries is how many deliveries a window needs
	// before its failure rate can open a breaker.
	DefaultBreakerMinDeliveries = 20
)

// ErrBreakerOpen is matched, with errors.Is, by the error of a delivery a
// Breaker refused without calling its target: the destination failed too
// often, and the breaker waits for its cooldown. Like any retryable error
// it leaves the effect at the head of its row's outbox.
var ErrBreakerOpen = errors.New("delivery breaker open")

// BreakerState is the state of a Breaker.
type BreakerState int

// The breaker states.
const (
	// BreakerClosed lets every delivery through.
	BreakerClosed BreakerState = iota
	// BreakerHalfOpen lets one delivery through, the probe, and refuses
	// the others until it returns.
	BreakerHalfOpen
	// BreakerOpen refuses every delivery until its cooldown ends.
	BreakerOpen
)

// BreakerStates lists the states, in the order of their values.
var BreakerStates = []BreakerState{BreakerClosed, BreakerHalfOpen, BreakerOpen}

// String returns "closed", "half-open" or "open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerHalfOpen:
		return "half-open"
	case BreakerOpen:
		return "open"
	}
	return fmt.Sprintf("BreakerState(%d)", int(s))
}

// BreakerOptions configures NewBreaker; the zero value takes the defaults.
type BreakerOptions struct {
	// Name names the target in errors and logs, e.g. "webhook
	// https://example.com/effects" (default "the delivery target").
	Name string
	// MaxInFlight caps the deliveries in progress at once; more wait for
	// a slot (or their context). 0: no cap.
	MaxInFlight int
	// Failures is how many deliveries in a row must fail to open the
	// breaker (0: DefaultBreakerFailures; -1: never by count).
	Failures int
	// FailureRate opens the breaker when the share of failed deliveries
	// in the current Window reaches it, once the window has MinDeliveries
	// (0: never by rate).
	FailureRate float64
	// Window is the fixed window FailureRate is measured over (0:
	// DefaultBreakerWindow).
	Window time.Duration
	// MinDeliveries is how many deliveries a window needs before its rate
	// counts (0: DefaultBreakerMinDeliveries).
	MinDeliveries int
	// Cooldown is how long the breaker stays open before it lets one
	// delivery through to probe (0: DefaultBreakerCooldown).
	Cooldown time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// OnChange, when set, is called after every change of state, outside
	// the breaker's lock.
	OnChange func(from, to BreakerState)
}

// BreakerStats is a breaker's state and what it counted since it was
// built.
type BreakerStats struct {
	State     BreakerState
	OpenUntil time.Time // while open: when the next delivery probes
	InFlight  int       // deliveries in progress
	// Opened, HalfOpened and Closed count the transitions into each state.
	Opened, HalfOpened, Closed int64
	Refused                    int64 // deliveries refused while open or probing
	Failures                   int64 // deliveries that failed (retryable errors)
	Delivered                  int64 // deliveries that succeeded
}

// Breaker is a Target that protects another: it caps the deliveries in
// flight, and opens after too many failures, refusing deliveries (with
// ErrBreakerOpen, a retryable error) until a cooldown has passed; then one
// delivery probes the destination, and its success closes the breaker, its
// failure opens it for another cooldown. An effect refused stays at the
// head of its row's outbox, in order: nothing is lost and no record fails,
// and a drain after the breaker closed (drain-pending) delivers it.
//
// A permanent error (ErrPermanent) says the destination answered: it is
// not a failure of the destination and does not count toward opening.
type Breaker struct {
	t     Target
	o     BreakerOptions
	slots chan struct{}

	mu          sync.Mutex
	st          BreakerStats
	consecutive int
	probing     bool
	winStart    time.Time
	winTotal    int
	winFailed   int
	why         string
}

// NewBreaker returns a breaker around t.
func NewBreaker(t Target, o BreakerOptions) *Breaker {
	if o.Name == "" {
		o.Name = "the delivery target"
	}
	if o.Failures == 0 {
		o.Failures = DefaultBreakerFailures
	}
	if o.Window <= 0 {
		o.Window = DefaultBreakerWindow
	}
	if o.MinDeliveries <= 0 {
		o.MinDeliveries = DefaultBreakerMinDeliveries
	}
	if o.Cooldown <= 0 {
		o.Cooldown = DefaultBreakerCooldown
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	b := &Breaker{t: t, o: o}
	if o.MaxInFlight > 0 {
		b.slots = make(chan struct{}, o.MaxInFlight)
	}
	return b
}

// BreakerOpenError is the error of a delivery refused by an open breaker;
// errors.Is(err, ErrBreakerOpen) matches it.
type BreakerOpenError struct {
	Target string
	Why    string    // what opened it
	Until  time.Time // when a delivery will probe again (zero: a probe is in flight)
}

// Error says why the delivery was refused and what becomes of the effect.
func (e *BreakerOpenError) Error() string {
	when := "a probe delivery is in flight"
	if !e.Until.IsZero() {
		when = "the next delivery after " + e.Until.UTC().Format(time.RFC3339) + " probes it"
	}
	return fmt.Sprintf("%v: %s is failing (%s), so the breaker refuses deliveries; %s. The effect stays at the head of its row's outbox, in order, and is delivered once the breaker closes (drain-pending delivers every row's)",
		ErrBreakerOpen, e.Target, e.Why, when)
}

// Is makes errors.Is(err, ErrBreakerOpen) true.
func (e *BreakerOpenError) Is(target error) bool { return target == ErrBreakerOpen }

// Deliver delivers e through the target unless the breaker is open.
func (b *Breaker) Deliver(ctx context.Context, e Effect) error {
	probe, err := b.admit()
	if err != nil {
		return err
	}
	if b.slots != nil {
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			b.abandon(probe)
			return ctx.Err()
		}
		defer func() { <-b.slots }()
	}
	b.mu.Lock()
	b.st.InFlight++
	b.mu.Unlock()
	err = b.t.Deliver(ctx, e)
	b.done(probe, err, ctx.Err() != nil)
	return err
}

// admit lets a delivery through, or refuses it; probe is set for the one
// delivery that probes a half-open breaker.
func (b *Breaker) admit() (probe bool, err error) {
	b.mu.Lock()
	now := b.o.Now()
	var change []BreakerState
	switch b.st.State {
	case BreakerOpen:
		if now.Before(b.st.OpenUntil) {
			b.st.Refused++
			err = &BreakerOpenError{Target: b.o.Name, Why: b.why, Until: b.st.OpenUntil}
			break
		}
		change = b.set(BreakerHalfOpen)
		b.probing, probe = true, true
	case BreakerHalfOpen:
		if b.probing {
			b.st.Refused++
			err = &BreakerOpenError{Target: b.o.Name, Why: b.why}
			break
		}
		b.probing, probe = true, true
	}
	b.mu.Unlock()
	b.notify(change)
	return probe, err
}

// abandon gives back the probe of a delivery that never reached the
// target.
func (b *Breaker) abandon(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// done counts a delivery's result and moves the breaker.
func (b *Breaker) done(probe bool, err error, canceled bool) {
	b.mu.Lock()
	b.st.InFlight--
	if probe {
		b.probing = false
	}
	now := b.o.Now()
	failed := err != nil && !errors.Is(err, ErrPermanent) && !canceled
	var change []BreakerState
	switch {
	case err != nil && !failed:
		// canceled, or the destination answered that the effect is wrong:
		// nothing said about its health
	case failed:
		b.st.Failures++
		b.consecutive++
		b.count(now, true)
		switch {
		case b.st.State == BreakerHalfOpen && probe:
			b.why = "the probe delivery failed: " + err.Error()
			change = b.open(now)
		case b.st.State == BreakerClosed && b.o.Failures > 0 && b.consecutive >= b.o.Failures:
			b.why = fmt.Sprintf("%d deliveries in a row failed, the last: %v", b.consecutive, err)
			change = b.open(now)
		case b.st.State == BreakerClosed && b.o.FailureRate > 0 && b.winTotal >= b.o.MinDeliveries &&
			float64(b.winFailed) >= b.o.FailureRate*float64(b.winTotal):
			b.why = fmt.Sprintf("%d of %d deliveries since %s failed, the last: %v", b.winFailed, b.winTotal, b.winStart.UTC().Format(time.RFC3339), err)
			change = b.open(now)
		}
	default:
		b.st.Delivered++
		b.consecutive = 0
		b.count(now, false)
		if b.st.State == BreakerHalfOpen && probe {
			change = b.set(BreakerClosed)
			b.winStart, b.winTotal, b.winFailed = now, 0, 0
		}
	}
	b.mu.Unlock()
	b.notify(change)
}

// count adds a delivery to the failure-rate window.
func (b *Breaker) count(now time.Time, failed bool) {
	if b.winStart.IsZero() || now.Sub(b.winStart) >= b.o.Window {
		b.winStart, b.winTotal, b.winFailed = now, 0, 0
	}
	b.winTotal++
	if failed {
		b.winFailed++
	}
}

// open opens the breaker for a cooldown from now.
func (b *Breaker) open(now time.Time) []BreakerState {
	b.st.OpenUntil = now.Add(b.o.Cooldown)
	b.consecutive = 0
	return b.set(BreakerOpen)
}

// set moves to state s, counting the transition; it returns the change for
// notify (nil when s is the state already). The caller holds mu.
func (b *Breaker) set(s BreakerState) []BreakerState {
	from := b.st.State
	if from == s {
		return nil
	}
	b.st.State = s
	switch s {
	case BreakerOpen:
		b.st.Opened++
	case BreakerHalfOpen:
		b.st.HalfOpened++
	case BreakerClosed:
		b.st.Closed++
		b.st.OpenUntil = time.Time{}
	}
	return []BreakerState{from, s}
}

func (b *Breaker) notify(change []BreakerState) {
	if change != nil && b.o.OnChange != nil {
		b.o.OnChange(change[0], change[1])
	}
}

// Stats returns the breaker's state and counts.
func (b *Breaker) Stats() BreakerStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

// Name is the target's name, as errors give it.
func (b *Breaker) Name() string { return b.o.Name }

// Cooldown is how long the breaker stays open.
func (b *Breaker) Cooldown() time.Duration { return b.o.Cooldown }
