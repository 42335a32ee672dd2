package sidecar_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var _ sidecar.VerifyObserver = (*telemetry.Metrics)(nil)

// gauge reads name{projection, kind} from m (-1 when absent).
func gauge(t *testing.T, m *telemetry.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.Metric {
			have := map[string]string{}
			for _, l := range s.Label {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			return metricValue(s)
		}
	}
	return -1
}

func metricValue(s *dto.Metric) float64 {
	if s.Counter != nil {
		return s.Counter.GetValue()
	}
	return s.Gauge.GetValue()
}

// waitMetric waits until cond holds of m, for at most a minute.
func waitMetric(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With sidecar.verify, `host run`'s reader verifies a sample of the rows
// on a schedule: the metrics show the rows checked and no drift, then the
// drift injected behind the host's back (an attribute edited), which the
// lease table (the fleet view of `host status`) shows too.
func TestV1_RunVerifiesASampleOnAScheduleAndExportsTheDrift(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{Verify: &host.VerifyConfig{Every: host.Duration(time.Second), Sample: 1}})
	h := e.host(t, &testlogic.Ledger{})
	m := telemetry.New(telemetry.Options{})
	want := map[string]string{}
	for i := range 3 {
		appendAdds(t, h, fmt.Sprint("v", i), 0, 2)
		want[fmt.Sprint("v", i)] = foldLog(2)
	}
	stop := run(e.reader(t, h, "w1", m))
	defer func() { _ = stop(nil) }()
	e.waitRows(t, want, time.Minute)
	differs := map[string]string{"projection": projection, "kind": "differs"}
	waitMetric(t, "a pass checks the three rows and finds no drift", func() bool {
		return gauge(t, m, "dynafold_verify_rows_checked_total", map[string]string{"projection": projection}) >= 3 &&
			gauge(t, m, "dynafold_verify_drift_rows", differs) == 0
	})

	table := e.cfg.Projections[0].Table
	row := e.Get(t, table, testlogic.RowKey("v1"))
	row["total"] = abi.N("99")
	e.Put(t, table, row)

	waitMetric(t, "a pass counts the row edited behind the host's back", func() bool {
		return gauge(t, m, "dynafold_verify_drift_rows", differs) == 1
	})
	assert.Zero(t, gauge(t, m, "dynafold_verify_drift_rows", map[string]string{"projection": projection, "kind": "missing"}))
	st := m.Status()
	require.Len(t, st.Verify, 1)
	assert.Equal(t, projection, st.Verify[0].Projection)
	var f sidecar.Fleet
	waitMetric(t, "the lease table keeps the pass", func() bool {
		var err error
		f, err = sidecar.ReadFleet(context.Background(), e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		require.NoError(t, err)
		return len(f.Verify) == 1 && f.Verify[0].Differs == 1
	})
	assert.Equal(t, "w1", f.Verify[0].Worker)
	assert.Equal(t, int64(3), f.Verify[0].Rows)
	assert.Equal(t, 1.0, f.Verify[0].Sample)
	assert.Len(t, f.Shards, 1, "the verification item is no shard")
	assert.Empty(t, f.Problems())
}

// A paused projection's rows lack, on purpose, what the pause holds back:
// the scheduled pass skips it (and says so) until the resume has caught
// them up, rather than report that as drift; resumed and caught up, the
// passes run again and find none.
func TestV1_RunSkipsTheVerifyPassOfAPausedProjection(t *testing.T) {
	ctx := context.Background()
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{Verify: &host.VerifyConfig{Every: host.Duration(time.Second), Sample: 1, Grace: host.Duration(time.Millisecond)}})
	h := e.host(t, &testlogic.Ledger{})
	m := telemetry.New(telemetry.Options{})
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", m, slog.New(slog.NewTextHandler(logs, nil))))
	defer func() { _ = stop(nil) }()
	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, projection, true, "ops", "maintenance"))
	eventually(t, "the worker pauses the projection", func() (bool, string) { return h.IsPaused(projection), "not paused" })
	appendAdds(t, h, "p", 0, 2)
	waitMetric(t, "a pass is skipped while paused", func() bool {
		return strings.Contains(logs.String(), "verify: the pass is skipped while the projection is paused")
	})
	time.Sleep(1500 * time.Millisecond) // a pass's interval
	missing := map[string]string{"projection": projection, "kind": "missing"}
	assert.LessOrEqual(t, gauge(t, m, "dynafold_verify_drift_rows", missing), 0.0, "no drift while paused")

	require.NoError(t, sidecar.SetPaused(ctx, e.cfg, e.Client, projection, false, "ops", ""))
	e.waitRows(t, map[string]string{"p": foldLog(2)}, time.Minute)
	waitMetric(t, "a pass runs again once caught up, and finds no drift", func() bool {
		return gauge(t, m, "dynafold_verify_rows_checked_total", map[string]string{"projection": projection}) >= 1 &&
			gauge(t, m, "dynafold_verify_drift_rows", missing) == 0
	})
}

// failsRow is the ledger with a switch: once set, its evolve fails every
// call that folds an event of the stream instance row, as a plugin
// swapped in that no longer accepts an event it once applied.
type failsRow struct {
	*testlogic.Ledger
	row  string
	fail atomic.Bool
}

func (l *failsRow) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	if l.fail.Load() {
		for _, se := range req.Events {
			if se.Event.StreamID == l.row {
				return nil, errors.New("the plugin refuses this event now")
			}
		}
	}
	return l.Ledger.Evolve(ctx, req)
}

// A pass that could not check some rows (the plugin fails one of their
// events: `host verify` exits 2, not verified) is no "ok" pass: it is
// counted as result "unverified", the rows are exported as
// dynafold_verify_unverified_rows, and the log line of a pass without
// drift says how many rows it could not check.
func TestV1_RunExportsTheRowsAPassCouldNotCheck(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{Verify: &host.VerifyConfig{Every: host.Duration(time.Second), Sample: 1}})
	l := &failsRow{Ledger: &testlogic.Ledger{}, row: "v1"}
	h := e.host(t, l)
	m := telemetry.New(telemetry.Options{})
	want := map[string]string{}
	for i := range 3 {
		appendAdds(t, h, fmt.Sprint("v", i), 0, 2)
		want[fmt.Sprint("v", i)] = foldLog(2)
	}
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", m, slog.New(slog.NewTextHandler(logs, nil))))
	defer func() { _ = stop(nil) }()
	e.waitRows(t, want, time.Minute)
	l.fail.Store(true)

	of := map[string]string{"projection": projection}
	waitMetric(t, "a pass counts the row it could not check", func() bool {
		return gauge(t, m, "dynafold_verify_unverified_rows", of) == 1
	})
	assert.Positive(t, gauge(t, m, "dynafold_verify_passes_total", map[string]string{"projection": projection, "result": "unverified"}))
	assert.Zero(t, gauge(t, m, "dynafold_verify_drift_rows", map[string]string{"projection": projection, "kind": "differs"}))
	waitMetric(t, "the log says how many rows were not checked", func() bool {
		return strings.Contains(logs.String(), "verify: no drift in the sample, but 1 of its rows could not be checked") &&
			strings.Contains(logs.String(), "unverified=1")
	})

	l.fail.Store(false)
	waitMetric(t, "a pass that checks every row is ok again", func() bool {
		return gauge(t, m, "dynafold_verify_unverified_rows", of) == 0 &&
			gauge(t, m, "dynafold_verify_passes_total", map[string]string{"projection": projection, "result": "ok"}) > 0
	})
}
