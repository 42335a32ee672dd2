package swap_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// worker is one host of several sharing an archive.
type worker struct {
	s   *swap.Swapper
	log *syncbuf.Buffer
}

func newWorker(t *testing.T, first, archive string) worker {
	log := &syncbuf.Buffer{}
	s := newSwapper(t, first, swap.Config{Archive: archive, Logger: slog.New(slog.NewJSONHandler(log, nil))})
	return worker{s: s, log: log}
}

// offer offers module m to w and requires it swapped in, as a rollback or
// not.
func (w worker) offer(t *testing.T, m string, rollback bool) {
	t.Helper()
	before := w.s.Stats().Rollbacks
	if _, changed, err := w.s.Offer(context.Background(), candidate(t, m)); err != nil || !changed {
		t.Fatalf("Offer(%s) = changed %v, %v", m, changed, err)
	}
	got := w.s.Stats().Rollbacks - before
	want := map[bool]uint64{false: 0, true: 1}[rollback]
	if got != want {
		t.Errorf("Offer(%s) counted %d rollbacks, want %d; log:\n%s", m, got, want, w.log.String())
	}
	if ev := w.s.Events()[0]; (ev.Result == swap.ResultRollback) != rollback {
		t.Errorf("Offer(%s): the swap history says %q (rollback %v wanted)", m, ev.Result, rollback)
	}
}

// TestH3_WorkersSharingAnArchiveLogUpgradesAsSwaps: three hosts on one
// archive each accept an upgrade the first of them has just archived; each
// logs "plugin swapped", none a rollback. Putting the older module back is
// a rollback for each, also for a host that started on the newer one and
// knows the older only from the archive; putting the newer back after that
// is an upgrade again.
func TestH3_WorkersSharingAnArchiveLogUpgradesAsSwaps(t *testing.T) {
	archive := t.TempDir()
	ws := []worker{newWorker(t, v1, archive), newWorker(t, v1, archive), newWorker(t, v1, archive)}
	for _, w := range ws {
		w.offer(t, v2, false)
	}
	for i, w := range ws {
		if log := w.log.String(); strings.Contains(log, "plugin rolled back") || !strings.Contains(log, `"msg":"plugin swapped"`) {
			t.Errorf("worker %d logged:\n%s", i, log)
		}
	}

	late := newWorker(t, v2, archive) // restarted after the upgrade
	for _, w := range append(ws, late) {
		w.offer(t, v1, true)
	}
	if log := late.log.String(); !strings.Contains(log, `"msg":"plugin rolled back","from":"order-summary@2.0.0","to":"order-summary@1.0.0"`) {
		t.Errorf("the host started on 2.0.0 logged:\n%s", log)
	}
	for _, w := range append(ws, late) {
		w.offer(t, v2, false)
	}
}
