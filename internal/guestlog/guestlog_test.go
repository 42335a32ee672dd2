package guestlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestW4_Level(t *testing.T) {
	tests := []struct {
		in   int32
		want slog.Level
	}{
		{-5, slog.LevelDebug}, {0, slog.LevelDebug}, {1, slog.LevelInfo},
		{2, slog.LevelWarn}, {3, slog.LevelError}, {1 << 30, slog.LevelError},
	}
	for _, tt := range tests {
		if got := Level(tt.in); got != tt.want {
			t.Errorf("Level(%d) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestW4_Clean(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short", "hello", "hello"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"exactly the limit", strings.Repeat("a", MaxMessage), strings.Repeat("a", MaxMessage)},
		{"cut", strings.Repeat("a", MaxMessage+1), strings.Repeat("a", MaxMessage) + "…"},
		{"cut before a 3-byte rune across the limit", strings.Repeat("a", MaxMessage-1) + "€", strings.Repeat("a", MaxMessage-1) + "…"},
		{"rune ends at the limit", strings.Repeat("a", MaxMessage-3) + "€b", strings.Repeat("a", MaxMessage-3) + "€…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := clean([]byte(tt.in))
			if got != tt.want || n != len(tt.in) {
				t.Errorf("clean = %q (%d bytes), %d; want %q (%d bytes), %d", got, len(got), n, tt.want, len(tt.want), len(tt.in))
			}
			if s, _ := clean(tt.in); s != got {
				t.Errorf("clean of the string differs: %q", s)
			}
		})
	}
}

// counter is a slog.Handler counting records by message.
type counter struct {
	msgs    atomic.Int64
	dropped atomic.Int64
}

func (c *counter) Enabled(context.Context, slog.Level) bool { return true }
func (c *counter) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "dropped") {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "dropped" {
				c.dropped.Add(int64(a.Value.Uint64()))
			}
			return true
		})
		return nil
	}
	c.msgs.Add(1)
	return nil
}
func (c *counter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *counter) WithGroup(string) slog.Handler      { return c }

// TestW4_SinkHammer logs from many goroutines at once (run with -race):
// every message is either logged or counted as dropped, the burst bounds
// what passes, and the bucket refills at the rate.
func TestW4_SinkHammer(t *testing.T) {
	c := &counter{}
	name := "p"
	s := New(slog.New(c), &name, 100, 10, time.Hour)
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				s.Log(context.Background(), slog.LevelInfo, "evolve", []byte("m"))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	passed := c.msgs.Load()
	if limit := 10 + int64(100*elapsed.Seconds()) + 1; passed < 10 || passed > limit {
		t.Errorf("%d messages passed a burst of 10 at 100/s in %s, want 10 to %d", passed, elapsed, limit)
	}
	time.Sleep(100 * time.Millisecond) // ~10 tokens
	s.Log(context.Background(), slog.LevelInfo, "evolve", []byte("after"))
	if c.msgs.Load() != passed+1 {
		t.Error("the bucket did not refill")
	}
	s.Close()
	if got := passed + c.dropped.Load(); got != goroutines*each {
		t.Errorf("logged %d + dropped %d = %d, want %d", passed, c.dropped.Load(), got, goroutines*each)
	}
}
