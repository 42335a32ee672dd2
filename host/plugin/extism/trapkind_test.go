package extism_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/wasmtest"
)

// holdingLog is a slog handler that holds the guest's "about to trap"
// message until the log call's context (the call's, with its deadline)
// ends.
type holdingLog struct{ limit time.Duration }

func (h holdingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h holdingLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h holdingLog) WithGroup(string) slog.Handler            { return h }
func (h holdingLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "about to trap" {
		select {
		case <-ctx.Done():
		case <-time.After(h.limit): // a host that does not pass the call's context
		}
	}
	return nil
}

// TestW6_ExtismTrapIsATrapAfterTheDeadline: an Extism guest that traps on
// its own is reported as a trap even when its call's time ran out while it
// was in a host function (the log call), before it trapped: the cause is
// read from the error, not from the state of the call's context. A guest
// that loops is a timeout, as ever.
func TestW6_ExtismTrapIsATrapAfterTheDeadline(t *testing.T) {
	const timeout = 150 * time.Millisecond
	p := load(t, wasmtest.ExtismPlugin{Name: "logtrap", EvolveLogTrap: true}.Bytes(), extism.Config{
		PoolSize: 1, CallTimeout: timeout, Logger: slog.New(holdingLog{limit: 4 * timeout}),
		GuestLog: plugin.GuestLog{Enabled: true}})
	_, err := p.Evolve(context.Background(), misbehaveRun("Ok"))
	wantCallError(t, err, "logtrap@0.0.1", "evolve", extism.ErrTrap, "trap: unreachable")
	if errors.Is(err, extism.ErrTimeout) {
		t.Errorf("a trap reported as a timeout: %v", err)
	}

	// The Go guest's load runs its _initialize under CallTimeout: 150 ms
	// timed it out on a loaded machine, so the loop gets the default.
	loop := load(t, testGuest(t, "misbehave"), extism.Config{PoolSize: 1, CallTimeout: extism.DefaultCallTimeout})
	_, err = loop.Evolve(context.Background(), misbehaveRun("Loop"))
	wantCallError(t, err, "misbehave@0.1.0", "evolve", extism.ErrTimeout, "timeout after "+extism.DefaultCallTimeout.String())
}

// TestW6_ExtismStartFunctionThatNeverReturnsIsRefused: an Extism module
// whose start function never returns is refused once the call timeout is
// over (a *LoadError matching ErrTimeout that names the start function),
// and Load honours its context (ErrCanceled); before, Load never returned.
func TestW6_ExtismStartFunctionThatNeverReturnsIsRefused(t *testing.T) {
	const timeout = 300 * time.Millisecond
	wasm := wasmtest.ExtismPlugin{StartLoop: true}.Bytes()
	for _, tc := range []struct {
		name    string
		timeout time.Duration // the call timeout
		ctx     time.Duration // Load's context; 0: none
		want    error
	}{
		{"call timeout", timeout, 0, extism.ErrTimeout},
		{"Load's context", time.Hour, timeout, extism.ErrCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			done := make(chan error, 1)
			go func() {
				p, err := extism.Load(ctx, wasm, extism.Config{Name: "looper", PoolSize: 1, CallTimeout: tc.timeout})
				if p != nil {
					p.Close(context.Background())
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Load still running after a minute")
			}
			t.Logf("error: %v", err)
			var le *extism.LoadError
			if !errors.As(err, &le) || le.Plugin != "looper" {
				t.Fatalf("error %v is not a *LoadError naming the plugin", err)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "start function") {
				t.Errorf("error %v, want one matching %v naming the start function", err, tc.want)
			}
		})
	}
}
