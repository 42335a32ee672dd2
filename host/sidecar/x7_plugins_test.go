package sidecar_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// versionedLedger is the test ledger under another version.
type versionedLedger struct {
	*testlogic.Ledger
	version string
}

func (l versionedLedger) Describe() abi.Description {
	d := l.Ledger.Describe()
	d.Version = l.version
	return d
}

// Workers publish the plugin versions they serve with their status, and
// the fleet view (host status) shows them per worker: in a rolling deploy
// two workers serving two versions are told apart, where only each
// worker's own page showed its version (an operator's trial).
func TestX7_TheFleetViewShowsThePluginVersionEachWorkerServes(t *testing.T) {
	ctx := context.Background()
	e := start(t, ddblocal.StreamOptions{Shards: 2}, host.SidecarConfig{})
	m := telemetry.New(telemetry.Options{})
	var stops []func(error) error
	for w, v := range map[string]string{"w-a": "1.0.0", "w-b": "2.0.0"} {
		stops = append(stops, e.publishingWorker(t, e.host(t, versionedLedger{&testlogic.Ledger{}, v}), w, m))
	}
	defer func() {
		for _, stop := range stops {
			_ = stop(nil)
		}
	}()
	h := e.host(t, &testlogic.Ledger{})
	for i := 0; i < 6; i++ {
		appendAdds(t, h, fmt.Sprint("v", i), 0, 1)
	}
	eventually(t, "each worker's plugin version in the fleet view", func() (bool, string) {
		f, err := sidecar.ReadFleet(ctx, e.cfg, e.Client, e.streamsClient(t), sidecar.FleetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got := map[string]string{}
		for _, w := range f.Workers {
			got[w.ID] = w.Plugins[projection]
		}
		want := map[string]string{"w-a": "ledger@1.0.0", "w-b": "ledger@2.0.0"}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
}

// publishingWorker runs a reader named worker over h that reports to m and
// publishes its status (freshness, plugin versions) in the lease table, as
// host run does; it returns the reader's stop.
func (e *env) publishingWorker(t *testing.T, h *host.Host, worker string, m *telemetry.Metrics) func(error) error {
	t.Helper()
	cfg := *e.cfg
	side := *cfg.Sidecar
	side.WorkerID = worker
	cfg.Sidecar = &side
	r, err := sidecar.New(context.Background(), h, &cfg, sidecar.Options{Observer: m, Logger: quiet, DynamoDB: e.Client, Streams: e.streamsClient(t), Status: m.FreshnessReports})
	require.NoError(t, err)
	return run(r)
}
