package deliver_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/deliver"
)

// A breaker opens when a window's failure rate reaches its threshold (a
// permanent error says the destination answered, so it counts as no
// failure), refuses deliveries with ErrBreakerOpen until its cooldown, and
// lets one probe through after it; a failed probe opens it again.
func TestX8_BreakerOpensOnAFailureRateAndIgnoresPermanentErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var failWith error
	fail := func(err error) { mu.Lock(); failWith = err; mu.Unlock() }
	var calls atomic.Int64
	target := deliver.Func(func(context.Context, deliver.Effect) error {
		calls.Add(1)
		mu.Lock()
		defer mu.Unlock()
		return failWith
	})
	var changes []string
	b := deliver.NewBreaker(target, deliver.BreakerOptions{Name: "test target", Failures: -1, FailureRate: 0.5, MinDeliveries: 4,
		Window: time.Minute, Cooldown: 10 * time.Second, Now: func() time.Time { return now },
		OnChange: func(from, to deliver.BreakerState) { changes = append(changes, from.String()+"→"+to.String()) }})
	ctx := context.Background()
	deliverOnce := func() error { return b.Deliver(ctx, deliver.Effect{}) }

	fail(deliver.Permanent(errors.New("bad effect")))
	for range 5 {
		require.Error(t, deliverOnce())
	}
	assert.Equal(t, deliver.BreakerClosed, b.Stats().State, "permanent errors do not open it")

	fail(errors.New("503"))
	require.Error(t, deliverOnce())
	fail(nil)
	require.NoError(t, deliverOnce())
	fail(errors.New("503"))
	require.Error(t, deliverOnce())
	assert.Equal(t, deliver.BreakerClosed, b.Stats().State, "2 failures of 8 deliveries: below the rate")
	for range 6 {
		_ = deliverOnce()
	}
	assert.Equal(t, deliver.BreakerOpen, b.Stats().State)

	before := calls.Load()
	err := deliverOnce()
	assert.ErrorIs(t, err, deliver.ErrBreakerOpen)
	assert.Contains(t, err.Error(), "test target is failing")
	assert.Equal(t, before, calls.Load(), "an open breaker calls nothing")

	now = now.Add(11 * time.Second)
	require.Error(t, deliverOnce(), "the probe fails")
	assert.Equal(t, deliver.BreakerOpen, b.Stats().State)
	now = now.Add(11 * time.Second)
	fail(nil)
	require.NoError(t, deliverOnce(), "the probe succeeds")
	assert.Equal(t, deliver.BreakerClosed, b.Stats().State)
	assert.Equal(t, []string{"closed→open", "open→half-open", "half-open→open", "open→half-open", "half-open→closed"}, changes)
}

// maxInFlight caps the deliveries in progress: more wait for a slot.
func TestX8_MaxInFlightCapsConcurrentDeliveries(t *testing.T) {
	release := make(chan struct{})
	var inFlight, most atomic.Int64
	target := deliver.Func(func(context.Context, deliver.Effect) error {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		return nil
	})
	b := deliver.NewBreaker(target, deliver.BreakerOptions{MaxInFlight: 2, Failures: -1})
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = b.Deliver(context.Background(), deliver.Effect{}) }()
	}
	deadline := time.Now().Add(time.Minute)
	for inFlight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 2, b.Stats().InFlight)
	close(release)
	wg.Wait()
	assert.Equal(t, int64(2), most.Load(), "never more than two at once")
	assert.Equal(t, int64(6), b.Stats().Delivered)
}
