package extism_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
)

// logRecord is one record a recorder received, its attributes as strings.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// recorder is a slog.Handler keeping every record.
type recorder struct {
	mu  sync.Mutex
	got []logRecord
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	lr := logRecord{level: rec.Level, msg: rec.Message, attrs: map[string]string{}}
	rec.Attrs(func(a slog.Attr) bool { lr.attrs[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	r.got = append(r.got, lr)
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { panic("not used") }
func (r *recorder) WithGroup(string) slog.Handler      { panic("not used") }

// matching returns the records whose message starts with prefix.
func (r *recorder) matching(prefix string) []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logRecord
	for _, lr := range r.got {
		if strings.HasPrefix(lr.msg, prefix) {
			out = append(out, lr)
		}
	}
	return out
}

// TestW4_ExtismGuestLog routes an Extism PDK's log functions (log_debug ...
// log_error) into the host's slog logger, with the same attributes and rate
// limit as the raw ABI's dynafold.log, and discards them for a plugin without
// guest logging even after another plugin lowered the SDK's process-wide
// level.
func TestW4_ExtismGuestLog(t *testing.T) {
	ctx := context.Background()
	wasm := testGuest(t, "misbehave")
	t.Run("enabled", func(t *testing.T) {
		rec := &recorder{}
		p := load(t, wasm, extism.Config{PoolSize: 1, Logger: slog.New(rec), GuestLog: plugin.GuestLog{Enabled: true}})
		if _, err := p.Evolve(ctx, misbehaveRun("Log")); err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			msg   string
			level slog.Level
		}{
			{"extism debug", slog.LevelDebug}, {"extism info", slog.LevelInfo},
			{"extism warn", slog.LevelWarn}, {"extism error", slog.LevelError},
		} {
			got := rec.matching(w.msg)
			if len(got) != 1 || got[0].level != w.level || got[0].attrs["plugin"] != "misbehave@0.1.0" || got[0].attrs["function"] != "evolve" {
				t.Errorf("records %q: %v, want one at %v of misbehave@0.1.0 evolve", w.msg, got, w.level)
			}
		}
		if got := rec.matching("Calling function"); len(got) != 0 {
			t.Errorf("the SDK's own debug messages were logged as the guest's: %v", got)
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		// One report, at Close: the periodic one cannot come first however
		// long the flood takes.
		defer extism.SetGuestLogEveryForTest(time.Hour)()
		rec := &recorder{}
		p, err := extism.Load(ctx, wasm, extism.Config{PoolSize: 1, CacheDir: cacheDir, Logger: slog.New(rec),
			GuestLog: plugin.GuestLog{Enabled: true, Rate: 1, Burst: 5}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := p.Evolve(ctx, misbehaveRun("LogFlood")); err != nil {
			t.Fatal(err)
		}
		passed := len(rec.matching("extism flood "))
		// The burst, then one a second while the flood lasts, which a
		// loaded machine stretches: the bound follows the time it took.
		if most := 5 + int(time.Since(start).Seconds()); passed < 5 || passed > most {
			t.Errorf("%d of 300 messages passed a burst of 5 at 1/s in %s, want 5 to %d", passed, time.Since(start), most)
		}
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
		reports := rec.matching("dropped guest log messages")
		if len(reports) != 1 || reports[0].attrs["dropped"] != strconv.Itoa(300-passed) || reports[0].attrs["plugin"] != "misbehave@0.1.0" {
			t.Errorf("reports %v, want one of misbehave@0.1.0 with dropped=%d", reports, 300-passed)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		rec := &recorder{}
		p := load(t, wasm, extism.Config{PoolSize: 1, Logger: slog.New(rec)})
		if _, err := p.Evolve(ctx, misbehaveRun("Log")); err != nil {
			t.Fatal(err)
		}
		if got := rec.matching("extism "); len(got) != 0 {
			t.Errorf("guest logging is off but %d records arrived: %v", len(got), got)
		}
	})
}
