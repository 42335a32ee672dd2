package plugin_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
)

// TestW5_PoolNeverSharesAnInstance hammers a small pool from many goroutines
// with healthy and trapping calls. The pool panics if it ever hands out a busy
// instance, the guest fails a call that re-enters it, and the pool never
// holds more live instances than PoolSize.
func TestW5_PoolNeverSharesAnInstance(t *testing.T) {
	const size = 3
	p := loadGuest(t, "trap", plugin.Config{PoolSize: size})
	var (
		wg       sync.WaitGroup
		ok, trap atomic.Int64
		maxLive  atomic.Int64
		stop     = make(chan struct{})
	)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if l := int64(p.Stats().Live); l > maxLive.Load() {
				maxLive.Store(l)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			for i := 0; i < 60; i++ {
				typ := "Placed"
				if r.IntN(10) == 0 {
					typ = "Boom"
				}
				resp, err := p.Evolve(context.Background(), evolveReq("Placed", typ))
				switch {
				case typ == "Boom" && err != nil:
					trap.Add(1)
				case typ == "Placed" && err == nil && resp.State["count"].Str == "2":
					ok.Add(1)
				default:
					t.Errorf("event %s: resp %+v err %v", typ, resp, err)
					return
				}
			}
		}(uint64(g))
	}
	wg.Wait()
	close(stop)
	s := p.Stats()
	if maxLive.Load() > size || s.Live > size {
		t.Errorf("live instances reached %d (now %d), PoolSize is %d", maxLive.Load(), s.Live, size)
	}
	if s.Busy != 0 {
		t.Errorf("%d instances still busy", s.Busy)
	}
	if uint64(trap.Load()) != s.Discarded {
		t.Errorf("%d traps but %d discarded instances", trap.Load(), s.Discarded)
	}
	if ok.Load() == 0 || trap.Load() == 0 {
		t.Errorf("ok=%d trap=%d: the hammer did not exercise both paths", ok.Load(), trap.Load())
	}
}

func TestW5_WaitRespectsContext(t *testing.T) {
	// The looping call holds the only instance until the test cancels it
	// (a cleanup that runs before the plugin's Close): no timeout can hand
	// the instance back while the second call waits.
	p := loadGuest(t, "loop", plugin.Config{PoolSize: 1, CallTimeout: time.Minute})
	loopCtx, cancel := context.WithCancel(context.Background())
	looped := make(chan struct{})
	t.Cleanup(func() { cancel(); <-looped })
	go func() {
		defer close(looped)
		_, _ = p.Evolve(loopCtx, evolveReq("Loop"))
	}()
	waitBusy(t, p, 1)
	_, err := p.Evolve(ctxTimeout(t, 100*time.Millisecond), evolveReq("Placed"))
	wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrCanceled, "waiting for an instance")
}

// waitBusy waits until n of p's instances are busy (a call holds them).
func waitBusy(t *testing.T, p *plugin.Plugin, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); p.Stats().Busy != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d busy instances after a minute, want %d: %+v", p.Stats().Busy, n, p.Stats())
		}
	}
}

func TestW5_CloseWaitsForCallsInFlight(t *testing.T) {
	// The instance starts under a bound of its own (a test hook): on a
	// loaded machine the 300 ms CallTimeout timed out the load.
	defer plugin.SetStartTimeoutForTest(time.Minute)()
	ctx := context.Background()
	p, err := plugin.Load(ctx, testGuest(t, "loop"), plugin.Config{PoolSize: 2, CallTimeout: 300 * time.Millisecond, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Evolve(ctx, evolveReq("Loop"))
		done <- err
	}()
	waitBusy(t, p, 1) // Close comes while the call runs
	if err := p.Close(ctxTimeout(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	// The call's failure discards its instance before it gives its slot
	// back, which Close waits for: a Close that did not wait finds none
	// discarded.
	if s := p.Stats(); s.Discarded != 1 {
		t.Errorf("Close returned before the call in flight ended: %+v", s)
	}
	select {
	case err := <-done:
		// The call ended on its own timeout, not because Close tore the
		// runtime down under it.
		wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrTimeout, "timeout after 300ms")
	case <-time.After(time.Minute):
		t.Fatal("the call in flight never returned")
	}
	if _, err := p.Evolve(ctx, evolveReq("Placed")); !errors.Is(err, plugin.ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if s := p.Stats(); s.Live != 0 {
		t.Errorf("%d instances alive after Close", s.Live)
	}
}
