package guest_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	guest "github.com/dynafold/dynafold/sdk-guest"
)

type records struct {
	mu  sync.Mutex
	got []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// TestW4_LogNative: run natively, Log and Logf go to slog.Default() at the
// matching level.
func TestW4_LogNative(t *testing.T) {
	rec := &records{}
	old := slog.Default()
	slog.SetDefault(slog.New(rec))
	t.Cleanup(func() { slog.SetDefault(old) })

	guest.Log(guest.LevelDebug, "d")
	guest.Log(guest.LevelInfo, "i")
	guest.Log(guest.LevelWarn, "w")
	guest.Logf(guest.LevelError, "e %d", 42)
	guest.Log(guest.Level(9), "beyond error")
	want := []struct {
		level slog.Level
		msg   string
	}{
		{slog.LevelDebug, "d"}, {slog.LevelInfo, "i"}, {slog.LevelWarn, "w"},
		{slog.LevelError, "e 42"}, {slog.LevelError, "beyond error"},
	}
	if len(rec.got) != len(want) {
		t.Fatalf("%d records, want %d", len(rec.got), len(want))
	}
	for i, w := range want {
		if r := rec.got[i]; r.Level != w.level || r.Message != w.msg {
			t.Errorf("record %d: %v %q, want %v %q", i, r.Level, r.Message, w.level, w.msg)
		}
	}
}
