package swap_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/wasmtest"
)

// hangBound is how long a test waits for an operation that must not wait
// for a candidate being validated; far less than that candidate's own call
// timeout, far more than a loaded machine needs.
const hangBound = 2 * time.Minute

// within runs f in the background and returns its error, failing the test
// when it has not returned within hangBound.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		t.Fatalf("%s still running after %s", what, hangBound)
		return nil
	}
}

// TestH3_ACandidateBeingValidatedHoldsNoLock: while a candidate is in the
// pipeline (here one whose start function never returns, under a call
// timeout of an hour), calls are served by the current version, History
// answers, Rollback swaps the previous version back in, and Close returns
// and ends the candidate's validation, whose Offer then answers ErrClosed.
// Before, the pipeline ran under the lock Rollback and Close take, so both
// waited for the candidate for ever.
func TestH3_ACandidateBeingValidatedHoldsNoLock(t *testing.T) {
	ctx := context.Background()
	cfg := swap.Config{Plugin: plugin.Config{CacheDir: cacheDir, PoolSize: 2, CallTimeout: time.Hour}}
	s, err := swap.New(ctx, candidate(t, v1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if _, _, err := s.Offer(ctx, candidate(t, v2)); err != nil {
		t.Fatal(err)
	}
	looper := swap.Candidate{Wasm: wasmtest.RawPlugin{Name: "order-summary", Yield: true, StartLoop: true}.Bytes(), Origin: "test:looper"}
	entered := make(chan struct{})
	defer swap.SetPrepareHookForTest(func(c swap.Candidate) {
		if c.Origin == looper.Origin {
			close(entered)
		}
	})()
	offered := make(chan error, 1)
	go func() {
		_, _, err := s.Offer(ctx, looper)
		offered <- err
	}()
	<-entered

	resp, err := s.Evolve(ctx, evolveReq("o-1", 1))
	if err != nil || model(resp.Item) != "2" {
		t.Fatalf("a call while the candidate is validated: %v, %v; want v2's row", resp, err)
	}
	if h := s.History(); len(h) != 2 {
		t.Errorf("History: %d versions, want 2", len(h))
	}
	var info swap.Info
	if err := within(t, "Rollback", func() (err error) { info, err = s.Rollback(ctx); return err }); err != nil {
		t.Fatalf("Rollback while a candidate is validated: %v", err)
	}
	if info.Plugin != "order-summary@1.0.0" {
		t.Errorf("Rollback put %s back, want order-summary@1.0.0", info.Plugin)
	}
	cctx, cancel := context.WithTimeout(ctx, hangBound)
	defer cancel()
	if err := within(t, "Close", func() error { return s.Close(cctx) }); err != nil {
		t.Errorf("Close: %v", err)
	}
	err = within(t, "the candidate's Offer after Close", func() error { return <-offered })
	if !errors.Is(err, swap.ErrClosed) {
		t.Errorf("the candidate's Offer after Close: %v, want ErrClosed", err)
	}
}

// TestH3_CandidateWhoseStartNeverReturnsIsRefused: a candidate whose start
// function never returns is refused at the load step once the call timeout
// is over (ErrTimeout), and the current version keeps serving.
func TestH3_CandidateWhoseStartNeverReturnsIsRefused(t *testing.T) {
	ctx := context.Background()
	// The default CallTimeout, which the looping start waits out: it also
	// bounds v1's start (a Go guest), which 300 ms did not leave room for
	// on a loaded machine.
	s := newSwapper(t, v1, swap.Config{Plugin: plugin.Config{CacheDir: cacheDir, PoolSize: 2, CallTimeout: plugin.DefaultCallTimeout}})
	looper := swap.Candidate{Wasm: wasmtest.RawPlugin{Name: "order-summary", Yield: true, StartLoop: true}.Bytes(), Origin: "test:looper"}
	err := within(t, "Offer", func() error { _, _, err := s.Offer(ctx, looper); return err })
	var ce *swap.CandidateError
	if !errors.As(err, &ce) || ce.Step != swap.StepLoad || !errors.Is(err, plugin.ErrTimeout) {
		t.Fatalf("Offer: %v, want a *CandidateError at the load step matching ErrTimeout", err)
	}
	if got := s.Current().Plugin; got != "order-summary@1.0.0" {
		t.Errorf("serving %s after the refusal, want order-summary@1.0.0", got)
	}
	if _, err := s.Evolve(ctx, evolveReq("o-1", 1)); err != nil {
		t.Errorf("a call after the refusal: %v", err)
	}
}
