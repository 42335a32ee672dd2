package sidecar_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// Events a paused projection skipped and the resume caught up are counted
// as a batch's are: applied, rows written, and each event's freshness, late
// by the pause, so a pause longer than an objective's threshold misses it.
// Before, the catch-up counted nothing: the metrics and the freshness
// objectives never saw a pause.
func TestX8_EventsCaughtUpAfterAResumeAreCountedWithTheirFreshness(t *testing.T) {
	ctx := context.Background()
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{})
	e.cfg.Projections[0].Freshness = host.FreshnessConfig{"p95": host.Duration(500 * time.Millisecond)}
	h := e.host(t, &testlogic.Ledger{})
	m := telemetry.New(telemetry.Options{Objectives: e.cfg.Objectives()})
	stop := run(e.reader(t, h, "w-a", m))
	defer stop(nil)

	appendAdds(t, h, "a", 0, 3)
	e.waitRows(t, map[string]string{"a": foldLog(3)}, time.Minute)
	eventually(t, "the live events are counted", func() (bool, string) {
		c := m.Counters()
		return c.EventsApplied == 3, fmt.Sprintf("%+v", c)
	})

	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, "ledger", true, "tester", "maintenance"))
	eventually(t, "the worker pauses the projection", func() (bool, string) { return h.IsPaused("ledger"), "not paused" })
	appendAdds(t, h, "a", 3, 2)
	appendAdds(t, h, "b", 0, 3)
	eventually(t, "the skipped instances are recorded", func() (bool, string) {
		f, err := sidecar.ReadFleet(ctx, e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range f.Projections {
			if p.Name == "ledger" {
				return p.Deferred >= 2, fmt.Sprintf("%+v", p)
			}
		}
		return false, "no ledger projection"
	})
	time.Sleep(600 * time.Millisecond) // the pause outlasts the objective's threshold
	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, "ledger", false, "tester", ""))
	e.waitRows(t, map[string]string{"a": foldLog(5), "b": foldLog(3)}, time.Minute)

	eventually(t, "the caught-up events are counted", func() (bool, string) {
		c := m.Counters()
		return c.EventsApplied == 8 && c.RowsWritten >= 3, fmt.Sprintf("%+v", c)
	})
	var rep host.FreshnessReport
	for _, r := range m.FreshnessReports() {
		if r.Projection == "ledger" {
			rep = r
		}
	}
	require.Equal(t, int64(8), rep.Events(), "every applied event has its freshness")
	st := rep.Status()
	require.Len(t, st, 1)
	assert.False(t, st[0].Met, "5 of 8 events waited out the pause: %+v", st[0])
	assert.LessOrEqual(t, st[0].Within, int64(3))
}
