package telemetry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
)

// A sweep sets the projection's pending gauges (count, age of the oldest)
// and counts what it delivered; a failed or skipped sweep leaves the
// gauges; a worker that stops sweeping drops them, for the new sweeper's.
func TestO5_OutboxSweepGauges(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	p := map[string]string{"projection": "ledger"}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	m.OutboxSwept(host.OutboxSweep{Projection: "ledger", Pending: 7, Rows: 3, Oldest: at.Add(-42 * time.Second), Delivered: 4}, at, nil)
	m.OutboxSwept(host.OutboxSweep{Projection: "ledger", Skipped: "breaker open"}, at, nil)
	m.OutboxSwept(host.OutboxSweep{Projection: "ledger"}, at, errors.New("throttled"))

	for name, want := range map[string]float64{"dynafold_outbox_pending_effects": 7, "dynafold_outbox_pending_oldest_seconds": 42,
		"dynafold_outbox_swept_effects_total": 4} {
		got, ok := value(t, m, name, p)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for result, want := range map[string]float64{"ok": 1, "skipped": 1, "error": 1} {
		got, _ := value(t, m, "dynafold_outbox_sweeps_total", map[string]string{"projection": "ledger", "result": result})
		assert.Equal(t, want, got, result)
	}

	m.NotSweeping("ledger")
	_, ok := value(t, m, "dynafold_outbox_pending_effects", p)
	assert.False(t, ok, "another worker sweeps and exports it now")
}
