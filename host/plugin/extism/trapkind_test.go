package extism_test

import (
	"context"
	"errors"
	"log/slog"
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

	loop := load(t, testGuest(t, "misbehave"), extism.Config{PoolSize: 1, CallTimeout: timeout})
	_, err = loop.Evolve(context.Background(), misbehaveRun("Loop"))
	wantCallError(t, err, "misbehave@0.1.0", "evolve", extism.ErrTimeout, "timeout after 150ms")
}
