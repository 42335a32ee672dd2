package swap_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The version a swap replaces is logged as retired once its calls drain;
// the version serving when the host closes is not (every one-shot command
// closed its host with an "plugin version retired" line).
func TestH3_RetiredIsLoggedForASwapNotForClose(t *testing.T) {
	w := newWorker(t, v1, t.TempDir())
	w.offer(t, v2, false)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && w.s.Stats().Retired == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if n := strings.Count(w.log.String(), `"msg":"plugin version retired"`); n != 1 {
		t.Fatalf("after a swap: %d retired lines, want 1; log:\n%s", n, w.log.String())
	}
	if err := w.s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(w.log.String(), `"msg":"plugin version retired"`); n != 1 {
		t.Errorf("after Close: %d retired lines, want 1 (the close's at debug); log:\n%s", n, w.log.String())
	}
}
