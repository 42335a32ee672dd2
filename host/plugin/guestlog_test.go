package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
)

// logRecord is one record a recorder received, its attributes as strings.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// recorder is a slog.Handler keeping every record at or above its level.
type recorder struct {
	min slog.Level
	mu  sync.Mutex
	got []logRecord
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.min }

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

// loadLogger loads the logger test guest with guest logging as gl, logging
// into a recorder at level min.
func loadLogger(t *testing.T, gl plugin.GuestLog, min slog.Level) (*plugin.Plugin, *recorder) {
	t.Helper()
	rec := &recorder{min: min}
	return loadGuest(t, "logger", plugin.Config{PoolSize: 2, GuestLog: gl, Logger: slog.New(rec)}), rec
}

func TestW4_GuestLogOptInRateLimited(t *testing.T) {
	ctx := context.Background()
	t.Run("records", func(t *testing.T) {
		p, rec := loadLogger(t, plugin.GuestLog{Enabled: true}, slog.LevelDebug)
		if _, err := p.Key(ctx, keyReq()); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Evolve(ctx, evolveReq("Placed", "Levels")); err != nil {
			t.Fatal(err)
		}
		want := []struct {
			msg, function string
			level         slog.Level
		}{
			{"key called", "key", slog.LevelDebug},
			{"folding Placed v1", "evolve", slog.LevelInfo},
			{"level -1", "evolve", slog.LevelDebug},
			{"level 0", "evolve", slog.LevelDebug},
			{"level 1", "evolve", slog.LevelInfo},
			{"level 2", "evolve", slog.LevelWarn},
			{"level 3", "evolve", slog.LevelError},
			{"level 7", "evolve", slog.LevelError},
		}
		for _, w := range want {
			got := rec.matching(w.msg)
			if len(got) != 1 {
				t.Errorf("%d records %q, want 1", len(got), w.msg)
				continue
			}
			r := got[0]
			if r.msg != w.msg || r.level != w.level || r.attrs["plugin"] != "logger@0.0.1" || r.attrs["function"] != w.function {
				t.Errorf("record %q at %v %v, want %q at %v plugin logger@0.0.1 function %s", r.msg, r.level, r.attrs, w.msg, w.level, w.function)
			}
		}
	})

	t.Run("host level filters before the rate", func(t *testing.T) {
		// Debug messages the handler does not want cost no token: with a
		// burst of 3, the info, warn and error messages of Levels get
		// through after its two debug ones, and only the fourth is dropped.
		p, rec := loadLogger(t, plugin.GuestLog{Enabled: true, Rate: 0.001, Burst: 3}, slog.LevelInfo)
		if _, err := p.Evolve(ctx, evolveReq("Levels")); err != nil {
			t.Fatal(err)
		}
		if got := len(rec.matching("level ")); got != 3 {
			t.Errorf("%d level records, want 3 (info, warn, error; debug filtered without a token)", got)
		}
		if got := rec.matching("level 7"); len(got) != 0 {
			t.Errorf("the 4th record passed a burst of 3: %v", got)
		}
	})

	t.Run("over the rate: dropped, counted, reported", func(t *testing.T) {
		defer plugin.SetGuestLogEveryForTest(100 * time.Millisecond)()
		p, rec := loadLogger(t, plugin.GuestLog{Enabled: true, Rate: 1, Burst: 5}, slog.LevelDebug)
		start := time.Now()
		if _, err := p.Evolve(ctx, evolveReq("Flood")); err != nil {
			t.Fatal(err)
		}
		passed := len(rec.matching("flood "))
		// The burst, then one a second while the flood lasts, which a
		// loaded machine stretches: the bound follows the time it took.
		if most := 5 + int(time.Since(start).Seconds()); passed < 5 || passed > most {
			t.Fatalf("%d of 1000 flood messages passed a burst of 5 at 1/s in %s, want 5 to %d", passed, time.Since(start), most)
		}
		// The report comes by itself, after the interval: once, or in a few
		// parts when the flood itself outlasted an interval on a loaded
		// machine; the parts add up to every drop, and no report follows
		// without new drops.
		var reports []logRecord
		dropped := func() int {
			n := 0
			for _, r := range reports {
				d, _ := strconv.Atoi(fmt.Sprint(r.attrs["dropped"]))
				n += d
			}
			return n
		}
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if reports = rec.matching("dropped guest log messages"); dropped() >= 1000-passed {
				break
			}
		}
		if dropped() != 1000-passed || len(reports) == 0 {
			t.Fatalf("reports %v count %d drops, want %d", reports, dropped(), 1000-passed)
		}
		n := len(reports)
		time.Sleep(300 * time.Millisecond)
		if reports = rec.matching("dropped guest log messages"); len(reports) != n {
			t.Fatalf("%d dropped-message reports after %d: a report without new drops", len(reports), n)
		}
		for _, r := range reports {
			if r.level != slog.LevelWarn || r.attrs["plugin"] != "logger@0.0.1" {
				t.Errorf("report %v %v, want a warning for logger@0.0.1", r.level, r.attrs)
			}
		}

		// Drops since the last report are reported at Close.
		if _, err := p.Evolve(ctx, evolveReq("Flood")); err != nil {
			t.Fatal(err)
		}
		passed2 := len(rec.matching("flood ")) - passed
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
		reports = rec.matching("dropped guest log messages")[n:]
		if len(reports) == 0 || dropped() != 1000-passed2 {
			t.Errorf("after Close: new reports %v count %d drops, want %d", reports, dropped(), 1000-passed2)
		}
	})
}

func TestW4_GuestLogDisabledIsNoOp(t *testing.T) {
	p, rec := loadLogger(t, plugin.GuestLog{}, slog.LevelDebug)
	note := rec.matching("plugin imports dynafold.log but guest logging is off")
	if len(note) != 1 || !strings.Contains(note[0].msg, "GuestLog.Enabled") || !strings.Contains(note[0].msg, `"guestLog": {"enabled": true}`) {
		t.Errorf("load note %v, want one naming the switches", note)
	}
	resp, err := p.Evolve(context.Background(), evolveReq("Placed", "Levels", "BadPtr", "Flood"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.State["count"].Str; got != "4" {
		t.Errorf("count %q, want 4", got)
	}
	for _, prefix := range []string{"folding", "level", "flood", "invalid guest log", "dropped"} {
		if got := rec.matching(prefix); len(got) != 0 {
			t.Errorf("guest logging is off but %d records %q arrived: %v", len(got), prefix, got)
		}
	}
}

func TestW4_GuestLogBadPointerIgnored(t *testing.T) {
	p, rec := loadLogger(t, plugin.GuestLog{Enabled: true}, slog.LevelDebug)
	before := p.Stats()
	resp, err := p.Evolve(context.Background(), evolveReq("BadPtr", "Placed"))
	if err != nil {
		t.Fatalf("a bad log pointer failed the call: %v", err)
	}
	if got := resp.State["count"].Str; got != "2" {
		t.Errorf("count %q, want 2", got)
	}
	if got := p.Stats().Discarded - before.Discarded; got != 0 {
		t.Errorf("%d instances discarded, want 0", got)
	}
	bad := rec.matching("invalid guest log call ignored")
	if len(bad) != 2 {
		t.Fatalf("%d invalid-call warnings, want 2: %v", len(bad), bad)
	}
	for i, frag := range []string{"message [0xfffffff0, +100) is outside memory", "message [0x10, +4294967295) is outside memory"} {
		if !strings.Contains(bad[i].msg, frag) || bad[i].level != slog.LevelWarn || bad[i].attrs["function"] != "evolve" {
			t.Errorf("warning %q %v %v lacks %q", bad[i].msg, bad[i].level, bad[i].attrs, frag)
		}
	}
	if len(rec.matching("folding Placed v2")) != 1 {
		t.Error("the guest's next message was lost")
	}
}

func TestW4_GuestLogBoundsMessages(t *testing.T) {
	p, rec := loadLogger(t, plugin.GuestLog{Enabled: true}, slog.LevelDebug)
	if _, err := p.Evolve(context.Background(), evolveReq("Long", "BadUTF8")); err != nil {
		t.Fatal(err)
	}
	long := rec.matching("xxx")
	if len(long) != 1 {
		t.Fatalf("%d long records, want 1", len(long))
	}
	// 1023 x, then é's first byte would be the 1024th: cut before it.
	if want := strings.Repeat("x", 1023) + "…"; long[0].msg != want || long[0].attrs["length"] != "2000" {
		t.Errorf("long message of %d bytes (length attr %q), want 1023 x and an ellipsis, length 2000", len(long[0].msg), long[0].attrs["length"])
	}
	if got := rec.matching("bad "); len(got) != 1 || got[0].msg != "bad \uFFFD utf-8" {
		t.Errorf("invalid UTF-8 logged as %v, want %q", got, "bad \uFFFD utf-8")
	}
}

func TestW4_GuestLogRefusesOtherDynafoldImports(t *testing.T) {
	wasm := testGuest(t, "logger")
	renamed := bytes.Replace(wasm, []byte("\x08dynafold\x03log"), []byte("\x08dynafold\x03lag"), 1)
	if bytes.Equal(renamed, wasm) {
		t.Fatal("the logger guest has no dynafold.log import to rename")
	}
	_, err := plugin.Load(context.Background(), renamed, plugin.Config{GuestLog: plugin.GuestLog{Enabled: true}})
	if !errors.Is(err, plugin.ErrInvalidModule) || !strings.Contains(err.Error(), `imports dynafold.lag; the host's "dynafold" module has only "log"`) {
		t.Errorf("load: %v, want ErrInvalidModule naming dynafold.lag", err)
	}
}

// TestW4_GuestLogSDK checks the SDK's side: guest.Logf reaches the host
// through dynafold.log, and a module that never logs does not import it
// (Go's linker drops the unreachable import), so it loads on any host.
func TestW4_GuestLogSDK(t *testing.T) {
	ctx := context.Background()
	if imps := imports(t, testGuest(t, "sdklog")); !imps["dynafold.log"] {
		t.Errorf("a module calling guest.Logf imports %v, want dynafold.log", imps)
	}
	for imp := range imports(t, orderSummaryWasm(t)) {
		if strings.HasPrefix(imp, "dynafold.") {
			t.Errorf("the order-summary example (which never logs) imports %s", imp)
		}
	}
	rec := &recorder{min: slog.LevelDebug}
	p := loadGuest(t, "sdklog", plugin.Config{GuestLog: plugin.GuestLog{Enabled: true}, Logger: slog.New(rec)})
	if _, err := p.Evolve(ctx, evolveReq("Placed")); err != nil {
		t.Fatal(err)
	}
	got := rec.matching("sdk folds")
	if len(got) != 1 || got[0].msg != "sdk folds Placed v1" || got[0].level != slog.LevelWarn ||
		got[0].attrs["plugin"] != "sdklog@0.0.1" || got[0].attrs["function"] != "evolve" {
		t.Errorf("SDK records %v, want one warning \"sdk folds Placed v1\" of sdklog@0.0.1 evolve", got)
	}
}

// imports lists a module's function imports as "module.name". wazero's
// interpreter decodes and validates the module as its compiler does, without
// compiling 3 MB of Go guest to native code only to read its imports.
func imports(t *testing.T, wasm []byte) map[string]bool {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	m, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, def := range m.ImportedFunctions() {
		mod, name, _ := def.Import()
		out[mod+"."+name] = true
	}
	return out
}

func keyReq() *abi.KeyRequest {
	return &abi.KeyRequest{Source: "Order", Events: []abi.Event{evolveReq("Placed").Events[0].Event}}
}

func itoa(n int) string { return strconv.Itoa(n) }

// nopHandler is an enabled slog.Handler that does nothing: the cost of the
// host's side of a guest log call without a handler's formatting.
type nopHandler struct{}

func (nopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (nopHandler) Handle(context.Context, slog.Record) error { return nil }
func (h nopHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h nopHandler) WithGroup(string) slog.Handler           { return h }

// BenchmarkGuestLog folds one event with the logger guest, which logs one
// message per event: "off" (GuestLog disabled: the import is a no-op),
// "filtered" (enabled, the handler's level above the message's), "on"
// (enabled, a handler that keeps records and does nothing with them; the
// rate high enough never to drop).
//
//	go test ./host/plugin -run '^$' -bench GuestLog
func BenchmarkGuestLog(b *testing.B) {
	ctx := context.Background()
	req := evolveReq("Placed")
	for _, tc := range []struct {
		name string
		gl   plugin.GuestLog
		h    slog.Handler
	}{
		{"off", plugin.GuestLog{}, nopHandler{}},
		{"filtered", plugin.GuestLog{Enabled: true}, slog.DiscardHandler},
		{"on", plugin.GuestLog{Enabled: true, Rate: 1e12, Burst: 1 << 30}, nopHandler{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p, err := plugin.Load(ctx, testGuest(b, "logger"), plugin.Config{PoolSize: 1, CacheDir: cacheDir, GuestLog: tc.gl, Logger: slog.New(tc.h)})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(ctx)
			for b.Loop() {
				if _, err := p.Evolve(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
