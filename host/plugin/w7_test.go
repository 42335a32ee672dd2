package plugin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// The misbehaving guests in Rust and C (testdata/rust-misbehave,
// testdata/c-misbehave.c), on their SDKs, contained as the Go ones of the
// W4 tests are.
var guestLangs = []string{"rust", "c"}

// misbehaving builds (once per process) the misbehaving guest of lang.
func misbehaving(t testing.TB, lang string) []byte {
	t.Helper()
	guestsMu.Lock()
	defer guestsMu.Unlock()
	if b, ok := guests[lang+"-misbehave"]; ok {
		return b
	}
	var b []byte
	if lang == "rust" {
		b = wasmbuild.BuildRust(t, "testdata/rust-misbehave")
	} else {
		b = wasmbuild.BuildC(t, []string{"testdata/c-misbehave.c"}, "DYNAFOLD_NO_EVOLVE_EXPORT")
	}
	guests[lang+"-misbehave"] = b
	return b
}

// smallGuest returns a small module that serves as good does (it counts
// the events it folds: mustServe passes) for the tests of the compilation
// cache, which any module will do for: the C guest, which compiles in a
// fraction of a Go guest's time, when clang can build for Wasm; else good.
func smallGuest(t testing.TB) []byte {
	t.Helper()
	if _, err := wasmbuild.FindC(); err != nil {
		return testGuest(t, "good")
	}
	return misbehaving(t, "c")
}

func loadMisbehaving(t *testing.T, lang string, cfg plugin.Config) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	if cfg.CacheDir == "" {
		cfg.CacheDir = cacheDir
	}
	p, err := plugin.Load(ctx, misbehaving(t, lang), cfg)
	if err != nil {
		t.Fatalf("load the %s guest: %v", lang, err)
	}
	t.Cleanup(func() {
		if err := p.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// TestW7_RustAndCTrapsFailOnlyThatCall: a Rust or C guest that reads
// outside its memory, panics (Rust aborts) or executes unreachable fails
// that call with ErrTrap, naming the trap and, for a Rust panic, its
// message; a healthy call beside it on another instance succeeds, the
// trapped instance is discarded, and the plugin goes on serving.
func TestW7_RustAndCTrapsFailOnlyThatCall(t *testing.T) {
	traps := map[string][]struct {
		event     string
		fragments []string
	}{
		"rust": {
			{"Boom", []string{"trap: out of bounds memory access", "wasm stack: ", "rust_misbehave"}},
			{"Panic", []string{"trap: unreachable", "rust-misbehave: a panic in evolve"}},
		},
		"c": {
			{"Boom", []string{"trap: out of bounds memory access", "wasm stack: ", "misbehave_evolve"}},
			{"Trap", []string{"trap: unreachable", "wasm stack: ", "misbehave_evolve"}},
		},
	}
	for _, lang := range guestLangs {
		t.Run(lang, func(t *testing.T) {
			p := loadMisbehaving(t, lang, plugin.Config{PoolSize: 2})
			for _, tt := range traps[lang] {
				t.Run(tt.event, func(t *testing.T) {
					before := p.Stats()
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
					wantCallError(t, err, lang+"-misbehave@0.0.1", "evolve", plugin.ErrTrap, tt.fragments...)
					if okErr != nil {
						t.Errorf("a concurrent healthy call failed: %v", okErr)
					}
					if got := p.Stats().Discarded - before.Discarded; got != 1 {
						t.Errorf("discarded %d instances, want 1", got)
					}
					mustServe(t, p)
				})
			}
		})
	}
}

// TestW7_RustAndCLoopsTimeOut: a Rust or C guest whose evolve never
// returns is stopped by CallTimeout with ErrTimeout (its loops are
// instrumented, as a Go guest's are: the watchdog fires once), and the
// plugin goes on serving; a caller's own deadline is a cancellation.
func TestW7_RustAndCLoopsTimeOut(t *testing.T) {
	defer plugin.SetStartTimeoutForTest(time.Minute)()
	var fired atomic.Int32
	defer plugin.SetWatchdogFiredHookForTest(func() { fired.Add(1) })()
	const timeout = 200 * time.Millisecond
	for _, lang := range guestLangs {
		t.Run(lang, func(t *testing.T) {
			fired.Store(0)
			name := lang + "-misbehave@0.0.1"
			p := loadMisbehaving(t, lang, plugin.Config{PoolSize: 1, CallTimeout: timeout})
			start := time.Now()
			_, err := p.Evolve(ctxTimeout(t, time.Minute), evolveReq("Loop"))
			if el := time.Since(start); el < timeout {
				t.Errorf("the call failed after %s, before its timeout of %s", el, timeout)
			}
			wantCallError(t, err, name, "evolve", plugin.ErrTimeout, "timeout after 200ms")
			if n := fired.Load(); n != 1 {
				t.Errorf("the watchdog fired %d times, want once", n)
			}
			mustServe(t, p)

			q := loadMisbehaving(t, lang, plugin.Config{PoolSize: 1, CallTimeout: 30 * time.Second})
			_, err = q.Evolve(ctxTimeout(t, 50*time.Millisecond), evolveReq("Loop"))
			wantCallError(t, err, name, "evolve", plugin.ErrCanceled, "canceled")
			if errors.Is(err, plugin.ErrTimeout) {
				t.Errorf("caller's deadline reported as the plugin's timeout: %v", err)
			}
			mustServe(t, q)
		})
	}
}

// TestW7_RustAndCGarbageIsACallError: a Rust or C module that returns an
// unknown status byte, a result outside its memory or a body that does not
// decode fails the call with ErrBadOutput and loses the instance; status 1
// is a guest error and keeps it.
func TestW7_RustAndCGarbageIsACallError(t *testing.T) {
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
	for _, lang := range guestLangs {
		t.Run(lang, func(t *testing.T) {
			p := loadMisbehaving(t, lang, plugin.Config{PoolSize: 1})
			for _, tt := range tests {
				t.Run(tt.event, func(t *testing.T) {
					before := p.Stats()
					_, err := p.Evolve(context.Background(), evolveReq(tt.event))
					wantCallError(t, err, lang+"-misbehave@0.0.1", "evolve", tt.kind, tt.fragment)
					if got := p.Stats().Discarded - before.Discarded; (got == 1) != tt.discard {
						t.Errorf("discarded %d instances, want discard=%v", got, tt.discard)
					}
					mustServe(t, p)
				})
			}
		})
	}
}

// TestW7_RustAndCMemoryLimit: a Rust or C guest that allocates without
// bound fails with ErrMemoryLimit (Rust's "memory allocation of N bytes
// failed" and the C SDK's "out of memory" are both recognized), and the
// plugin goes on serving.
func TestW7_RustAndCMemoryLimit(t *testing.T) {
	for _, lang := range guestLangs {
		t.Run(lang, func(t *testing.T) {
			p := loadMisbehaving(t, lang, plugin.Config{PoolSize: 1, MemoryLimitPages: 256})
			_, err := p.Evolve(context.Background(), evolveReq("Hog"))
			wantCallError(t, err, lang+"-misbehave@0.0.1", "evolve", plugin.ErrMemoryLimit, "memory limit of 256 pages reached")
			mustServe(t, p)
		})
	}
}
