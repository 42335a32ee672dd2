package swap

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestH3_CallInFlightFinishesOnTheOldVersion holds a reference on v1 as a
// call in flight does, swaps v2 in, and checks that v1 keeps serving that
// call, is closed only when it returns, and that new calls go to v2.
func TestH3_CallInFlightFinishesOnTheOldVersion(t *testing.T) {
	ctx := context.Background()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	v1 := wasmbuild.Build(t, filepath.Join(dir, "..", "..", "plugins", "examples", "order-summary", "wasm"))
	v2 := wasmbuild.Build(t, filepath.Join(dir, "testdata", "v2"))
	cache := t.TempDir()
	s, err := New(ctx, Candidate{Wasm: v1, Origin: "v1"}, Config{Plugin: plugin.Config{CacheDir: cache}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)

	old, err := s.acquire(abi.CapEvolve) // a call in flight on v1
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Offer(ctx, Candidate{Wasm: v2, Origin: "v2"}); err != nil {
		t.Fatal(err)
	}
	req := &abi.EvolveRequest{Key: abi.Item{"pk": abi.S("x")}, StreamID: "o", Events: []abi.SourcedEvent{{Source: "Order",
		Event: abi.Event{Stream: "Order", StreamID: "o", Version: 1, Type: "OrderPlaced", Data: abi.Item{"_tag": abi.S("OrderPlaced")}}}}}
	resp, err := s.Evolve(ctx, req)
	if err != nil || resp.Item["model"].Str != "2" {
		t.Fatalf("a new call: %v, %v", resp, err)
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case <-old.done:
		t.Fatal("v1 closed while a call was in flight on it")
	default:
	}
	resp, err = old.l.Evolve(ctx, req) // the call in flight goes on on v1
	if err != nil || resp.Item["model"].Str != "" {
		t.Fatalf("the call in flight: %v, %v", resp, err)
	}
	s.release(old)
	select {
	case <-old.done:
	case <-time.After(10 * time.Second):
		t.Fatal("v1 not closed once drained")
	}
	if _, err := old.l.Evolve(ctx, req); err == nil {
		t.Error("v1 still serves after it was closed")
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatal(err)
	}
}
