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
// and counts what it delivered; a failed sweep leaves the gauges; one
// skipped while the breaker is open still counted what is pending and
// sets them; a worker that stops sweeping drops them, for the new sweeper's.
func TestO5_OutboxSweepGauges(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	p := map[string]string{"projection": "ledger"}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	m.OutboxSwept(host.OutboxSweep{Projection: "ledger", Pending: 7, Rows: 3, Oldest: at.Add(-42 * time.Second), Delivered: 4}, at, nil)
	m.OutboxSwept(host.OutboxSweep{Projection: "ledger"}, at, errors.New("throttled"))

	for name, want := range map[string]float64{"dynafold_outbox_pending_effects": 7, "dynafold_outbox_pending_oldest_seconds": 42,
		"dynafold_outbox_swept_effects_total": 4} {
		got, ok := value(t, m, name, p)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	for result, want := range map[string]float64{"ok": 1, "skipped": 0, "error": 1} {
		got, _ := value(t, m, "dynafold_outbox_sweeps_total", map[string]string{"projection": "ledger", "result": result})
		assert.Equal(t, want, got, result)
	}

	// while the breaker is open the sweep delivers nothing but counts
	// what waits for it: the gauges and the status page show it
	m.OutboxSwept(host.OutboxSweep{Projection: "ledger", Skipped: "breaker open", Pending: 2005, Rows: 900, Oldest: at.Add(-85 * time.Second)}, at, nil)
	pending, _ := value(t, m, "dynafold_outbox_pending_effects", p)
	oldest, _ := value(t, m, "dynafold_outbox_pending_oldest_seconds", p)
	assert.Equal(t, []float64{2005, 85}, []float64{pending, oldest})
	st := m.Status().Outbox
	assert.Equal(t, []telemetry.OutboxSweepStatus{{Projection: "ledger", At: at, Pending: 2005, Rows: 900, Oldest: 85 * time.Second}}, st)
	skipped, _ := value(t, m, "dynafold_outbox_sweeps_total", map[string]string{"projection": "ledger", "result": "skipped"})
	assert.Equal(t, 1.0, skipped)

	m.NotSweeping("ledger")
	_, ok := value(t, m, "dynafold_outbox_pending_effects", p)
	assert.False(t, ok, "another worker sweeps and exports it now")
}
