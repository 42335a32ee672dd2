package plugin_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmtest"
)

// holdingLog is a slog handler that records every message and holds the
// guest's "about to trap" message until hold returns, so a test can make a
// guest trap after its call's time is up.
type holdingLog struct {
	mu   *sync.Mutex
	msgs *[]string
	hold func(ctx context.Context)
}

func newHoldingLog(hold func(ctx context.Context)) holdingLog {
	return holdingLog{mu: &sync.Mutex{}, msgs: new([]string), hold: hold}
}

func (h holdingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h holdingLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h holdingLog) WithGroup(string) slog.Handler            { return h }
func (h holdingLog) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	*h.msgs = append(*h.msgs, r.Message)
	h.mu.Unlock()
	if r.Message == "about to trap" && h.hold != nil {
		h.hold(ctx)
	}
	return nil
}

func (h holdingLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(*h.msgs, "\n")
}

// TestW6_TrapIsATrapAndTimeoutATimeoutInEveryModuleKind: a guest that traps
// is reported as a trap, also when it traps after its call's time ran out
// (it was in a host function when the watchdog fired, and trapped on its
// own before reaching a loop head), in an instrumented module (the host's
// interrupt flag) and an uninstrumented one (wazero's close-on-context-done,
// where the host cancels the call's context); a guest that loops is
// reported as a timeout in both. Operators read these causes in metrics and
// quarantine reasons: a crash reported as a timeout sends them to raise a
// timeout.
func TestW6_TrapIsATrapAndTimeoutATimeoutInEveryModuleKind(t *testing.T) {
	const timeout = 150 * time.Millisecond
	t.Run("instrumented/trap after the watchdog fired", func(t *testing.T) {
		fired := make(chan struct{})
		var once sync.Once
		defer plugin.SetWatchdogFiredHookForTest(func() { once.Do(func() { close(fired) }) })()
		logs := newHoldingLog(func(context.Context) { <-fired })
		p := loadRaw(t, wasmtest.RawPlugin{Name: "logtrap", Yield: true, EvolveLogTrap: true}, timeout, logs)
		if strings.Contains(logs.String(), "not instrumented") {
			t.Fatalf("the module was not instrumented:\n%s", logs)
		}
		_, err := p.Evolve(context.Background(), evolveReq("Placed"))
		wantCallError(t, err, "logtrap@0.0.1", "evolve", plugin.ErrTrap, "trap: unreachable")
		if errors.Is(err, plugin.ErrTimeout) {
			t.Errorf("a trap reported as a timeout: %v", err)
		}
	})
	t.Run("uninstrumented/trap after the deadline", func(t *testing.T) {
		// The call's context is the one the guest's log call carries: it
		// ends at the call's deadline.
		logs := newHoldingLog(func(ctx context.Context) { <-ctx.Done() })
		p := loadRaw(t, wasmtest.RawPlugin{Name: "logtrap", EvolveLogTrap: true}, timeout, logs)
		if !strings.Contains(logs.String(), "not instrumented") {
			t.Fatalf("the module was instrumented:\n%s", logs)
		}
		_, err := p.Evolve(context.Background(), evolveReq("Placed"))
		wantCallError(t, err, "logtrap@0.0.1", "evolve", plugin.ErrTrap, "trap: unreachable")
		if errors.Is(err, plugin.ErrTimeout) {
			t.Errorf("a trap reported as a timeout: %v", err)
		}
	})
	for _, instrumented := range []bool{true, false} {
		kind := map[bool]string{true: "instrumented", false: "uninstrumented"}[instrumented]
		t.Run(kind+"/trap", func(t *testing.T) {
			plugin.SetInstrumentForTest(instrumented)
			defer plugin.SetInstrumentForTest(true)
			p := loadGuest(t, "trap", plugin.Config{PoolSize: 1, CallTimeout: 5 * time.Second})
			_, err := p.Evolve(context.Background(), evolveReq("Placed", "Boom"))
			wantCallError(t, err, "trap@0.0.1", "evolve", plugin.ErrTrap, "trap: out of bounds memory access")
			mustServe(t, p)
		})
		t.Run(kind+"/timeout", func(t *testing.T) {
			plugin.SetInstrumentForTest(instrumented)
			defer plugin.SetInstrumentForTest(true)
			// Instantiating the Go guest, bounded by the call timeout in
			// production, is slow on a loaded machine (more so without the
			// instrumentation): the starts get a bound of their own.
			defer plugin.SetStartTimeoutForTest(time.Minute)()
			p := loadGuest(t, "loop", plugin.Config{PoolSize: 1, CallTimeout: timeout})
			_, err := p.Evolve(context.Background(), evolveReq("Loop"))
			wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrTimeout, "timeout after "+timeout.String())
			// The caller's deadline, on a plugin whose CallTimeout cannot
			// race it.
			q := loadGuest(t, "loop", plugin.Config{PoolSize: 1, CallTimeout: 30 * time.Second})
			_, err = q.Evolve(ctxTimeout(t, 50*time.Millisecond), evolveReq("Loop"))
			wantCallError(t, err, "loop@0.0.1", "evolve", plugin.ErrCanceled, "canceled")
		})
	}
}

// loadRaw loads an assembled module with guest logging into logs, a pool
// of one and timeout.
func loadRaw(t *testing.T, m wasmtest.RawPlugin, timeout time.Duration, logs slog.Handler) *plugin.Plugin {
	t.Helper()
	ctx := context.Background()
	p, err := plugin.Load(ctx, m.Bytes(), plugin.Config{PoolSize: 1, CallTimeout: timeout,
		Logger: slog.New(logs), GuestLog: plugin.GuestLog{Enabled: true}})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}
