// Package guestlog carries the log messages of one plugin's guest into the
// host's slog.Logger (ABI.md §7): levels mapped to slog's, messages
// bounded in size and made valid UTF-8, and a token bucket shared by all the
// plugin's instances so a chatty guest cannot flood the host's logs. Messages
// over the rate are dropped and counted; one warning per report interval
// says how many.
//
// Both plugin transports (host/plugin and host/plugin/extism) use it. Nothing
// here runs unless the guest logs: a call that does not log costs nothing.
package guestlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxMessage is the number of bytes of a guest message the host keeps; a
// longer message is cut at a rune boundary, "…" appended, and its length
// recorded in the attribute "length".
const MaxMessage = 1024

// Sink is one plugin's guest log. It is safe for concurrent use.
type Sink struct {
	log    *slog.Logger
	plugin *string // the plugin's name; set once it is known (before any call)
	rate   float64 // tokens per second
	burst  float64
	every  time.Duration // how often the dropped count is reported

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped uint64
	timer   *time.Timer // pending report of dropped messages
	closed  bool
}

// New returns the sink of one plugin: rate messages per second on average,
// up to burst at once, a dropped-message warning at most once per every.
// plugin points to the plugin's name, read when a message is logged.
func New(log *slog.Logger, plugin *string, rate float64, burst int, every time.Duration) *Sink {
	return &Sink{log: log, plugin: plugin, rate: rate, burst: float64(burst), tokens: float64(burst), every: every}
}

// Level maps a level of the raw ABI (0 debug, 1 info, 2 warn, 3 error) to
// slog's; lower values are debug, higher ones error.
func Level(l int32) slog.Level {
	switch {
	case l <= 0:
		return slog.LevelDebug
	case l == 1:
		return slog.LevelInfo
	case l == 2:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Log logs msg at level for the call of function fn, when the logger is
// enabled at that level and the rate allows; otherwise the message is dropped
// (and counted, when over the rate). msg may alias guest memory: it is copied.
func (s *Sink) Log(ctx context.Context, level slog.Level, fn string, msg []byte) {
	logMsg(s, ctx, level, fn, msg)
}

// LogString is Log for a message that is already a string.
func (s *Sink) LogString(ctx context.Context, level slog.Level, fn string, msg string) {
	logMsg(s, ctx, level, fn, msg)
}

func logMsg[T string | []byte](s *Sink, ctx context.Context, level slog.Level, fn string, msg T) {
	if !s.log.Enabled(ctx, level) {
		return // filtered by the host's level: costs no token
	}
	if !s.allow() {
		return
	}
	text, n := clean(msg)
	if n > MaxMessage {
		s.log.Log(ctx, level, text, "plugin", *s.plugin, "function", fn, "length", n)
		return
	}
	s.log.Log(ctx, level, text, "plugin", *s.plugin, "function", fn)
}

// Invalid reports, within the same rate, a log call the host could not
// serve (e.g. a message outside the guest's memory). The guest carries on.
func (s *Sink) Invalid(ctx context.Context, fn, what string) {
	if !s.log.Enabled(ctx, slog.LevelWarn) || !s.allow() {
		return
	}
	s.log.Warn("invalid guest log call ignored: "+what, "plugin", *s.plugin, "function", fn)
}

// allow takes a token, or counts a dropped message and arms the report.
func (s *Sink) allow() bool {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		s.tokens = min(s.burst, s.tokens+now.Sub(s.last).Seconds()*s.rate)
	}
	s.last = now
	if s.tokens >= 1 {
		s.tokens--
		return true
	}
	s.dropped++
	if s.timer == nil && !s.closed {
		s.timer = time.AfterFunc(s.every, s.report)
	}
	return false
}

// report logs the number of messages dropped since the last report.
func (s *Sink) report() {
	s.mu.Lock()
	n := s.dropped
	s.dropped, s.timer = 0, nil
	s.mu.Unlock()
	if n > 0 {
		s.log.Warn("dropped guest log messages over the rate limit", "plugin", *s.plugin,
			"dropped", n, "rate", s.rate, "burst", s.burst)
	}
}

// Close reports the messages dropped since the last report, at once, and
// stops the periodic report.
func (s *Sink) Close() {
	s.mu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	s.report()
}

// clean returns msg as valid UTF-8 of at most MaxMessage bytes (plus "…"
// when cut), and msg's length.
func clean[T string | []byte](msg T) (string, int) {
	n := len(msg)
	cut := msg
	if n > MaxMessage {
		i := MaxMessage
		for i > MaxMessage-utf8.UTFMax && !utf8.RuneStart(msg[i]) {
			i-- // do not split the rune that msg[MaxMessage] continues
		}
		cut = msg[:i]
	}
	text := string(cut)
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if n > MaxMessage {
		text += "…"
	}
	return text, n
}
