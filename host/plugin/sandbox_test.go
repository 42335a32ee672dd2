package plugin_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
)

func TestW4_TrapFailsOnlyThatCall(t *testing.T) {
	p := loadGuest(t, "trap", plugin.Config{PoolSize: 2})
	tests := []struct {
		event     string
		fragments []string
	}{
		{"Boom", []string{"trap: out of bounds memory access; wasm stack: main.evolve.func1 < rawguest.Evolve < "}},
		{"Panic", []string{"trap: unreachable: panic: runtime error: invalid memory address or nil pointer dereference; wasm stack: main.evolve.func1 < rawguest.Evolve < "}},
		{"Shape", []string{"trap: out of bounds memory access; wasm stack: main.(*folder[…]).fold ×3 < main.evolve.func1 < rawguest.Evolve < "}},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			before := p.Stats()
			// A healthy call runs beside the failing one on the other instance.
			var wg sync.WaitGroup
			var okErr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20 && okErr == nil; i++ {
					_, okErr = p.Evolve(context.Background(), evolveReq("Placed"))
				}
			}()
			_, err := p.Evolve(context.Background(), evolveReq("Placed", tt.event))
			wg.Wait()
			wantCallError(t, err, "trap@0.0.1", "evolve", plugin.ErrTrap, tt.fragments...)
			if okErr != nil {
				t.Errorf("a concurrent healthy call failed: %v", okErr)
			}
			if got := p.Stats().Discarded - before.Discarded; got != 1 {
				t.Errorf("discarded %d instances, want 1", got)
			}
			mustServe(t, p)
		})
	}
}

// A call that never returns is stopped by CallTimeout with ErrTimeout, and
// the plugin goes on serving; a caller's own deadline is a cancellation,
// not the plugin's timeout. The instances start under a bound of their own
// (a test hook), so that on a loaded machine only the looping call meets the
// short CallTimeout, not the load or the start of the next instance.
func TestW4_InfiniteLoopTimesOut(t *testing.T) {
	defer plugin.SetStartTimeoutForTest(time.Minute)()
	var fired atomic.Int32
	defer plugin.SetWatchdogFiredHookForTest(func() { fired.Add(1) })()
	const timeout = 200 * time.Millisecond
	p := loadGuest(t, "loop", plugin.Config{PoolSize: 1, CallTimeout: timeout})
	// The caller's minute only ends a call that CallTimeout failed to stop,
	// and then as a cancellation, which the assertions below refuse.
	start := time.Now()
	_, err := p.Evolve(ctxTimeout(t, time.Minute), evolveReq("Loop"))
	if el := time.Since(start); el < timeout {
		t.Errorf("the call failed after %s, before its timeout of %s", el, timeout)
	}
	wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrTimeout, "timeout after 200ms")
	if n := fired.Load(); n != 1 {
		t.Errorf("the watchdog fired %d times, want once", n)
	}
	mustServe(t, p)

	// The caller's own deadline is a cancellation, not the plugin's timeout:
	// with a CallTimeout far longer than the caller's 50 ms, the watchdog's
	// timer cannot fire first however late the goroutines run.
	q := loadGuest(t, "loop", plugin.Config{PoolSize: 1, CallTimeout: 30 * time.Second})
	_, err = q.Evolve(ctxTimeout(t, 50*time.Millisecond), evolveReq("Loop"))
	wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrCanceled, "canceled")
	if errors.Is(err, plugin.ErrTimeout) {
		t.Errorf("caller's deadline reported as the plugin's timeout: %v", err)
	}
	mustServe(t, q)
}

func TestW4_GarbageOutputIsCallError(t *testing.T) {
	p := loadGuest(t, "garbage", plugin.Config{PoolSize: 1})
	tests := []struct {
		event    string
		kind     error
		fragment string
		discard  bool
	}{
		{"Garbage", plugin.ErrBadOutput, "malformed output: status byte 0x7", true},
		{"OutOfBounds", plugin.ErrBadOutput, "malformed output: result buffer [0x7fff0000, +4096) is outside memory", true},
		{"Undecodable", plugin.ErrBadOutput, "malformed output: ", true},
		{"GuestError", plugin.ErrGuest, "guest error: cannot fold GuestError", false},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			before := p.Stats()
			_, err := p.Evolve(context.Background(), evolveReq(tt.event))
			wantCallError(t, err, "garbage@0.0.1", "evolve", tt.kind, tt.fragment)
			if got := p.Stats().Discarded - before.Discarded; (got == 1) != tt.discard {
				t.Errorf("discarded %d instances, want discard=%v", got, tt.discard)
			}
			mustServe(t, p)
		})
	}
}

func TestW4_MemoryLimit(t *testing.T) {
	p := loadGuest(t, "hog", plugin.Config{PoolSize: 1, MemoryLimitPages: 256})
	_, err := p.Evolve(context.Background(), evolveReq("Hog"))
	wantCallError(t, err, "hog@0.0.1", "evolve", plugin.ErrMemoryLimit, "memory limit of 256 pages reached")
	mustServe(t, p)
}

// The sandbox makes determinism a guarantee, not a rule plugin authors must
// keep: the guest's clock is frozen and its random bytes repeat, so every
// instance, fresh or used many times, folds the same request to the same
// bytes.
func TestY1_EveryInstanceFoldsTheSameRequestToTheSameBytes(t *testing.T) {
	const pool = 4
	p := loadGuest(t, "good", plugin.Config{PoolSize: pool})
	req := abi.AppendEvolveRequest(nil, evolveReq("Placed", "Placed", "Placed"))
	first, err := p.Call(context.Background(), abi.CapEvolve, req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := abi.DecodeEvolveResponse(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.State["now"].Str; got != "1970-01-01T00:00:00Z" {
		t.Errorf("the guest's wall clock reads %q, want the frozen epoch", got)
	}
	if got := resp.State["random"].Str; got == "" || got == "0000000000000000" {
		t.Errorf("random bytes %q", got)
	}
	// Every instance, fresh or used many times, answers with the same bytes:
	// each round checks out all the pool's instances at once, so the pool
	// must create every one of them, and folds the request on each.
	for round := range 25 {
		outs, err := p.CallEveryInstanceForTest(context.Background(), abi.CapEvolve, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != pool {
			t.Fatalf("round %d called %d instances, want %d", round, len(outs), pool)
		}
		for i, out := range outs {
			if string(out) != string(first) {
				t.Fatalf("round %d, instance %d: different output: %s", round, i, strings.ToValidUTF8(string(out), "?"))
			}
		}
	}
	// The public path too, from several goroutines at once.
	var wg sync.WaitGroup
	errs := make(chan error, pool*2)
	for range pool * 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				out, err := p.Call(context.Background(), abi.CapEvolve, req)
				if err != nil {
					errs <- err
					return
				}
				if string(out) != string(first) {
					errs <- errors.New("different output: " + strings.ToValidUTF8(string(out), "?"))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := p.Stats(); s.Created != pool || s.Discarded != 0 {
		t.Errorf("%d instances created, %d discarded; want exactly %d created, none discarded", s.Created, s.Discarded, pool)
	}
}
