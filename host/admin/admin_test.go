package admin_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

// served starts a host on ddblocal, runs one real batch (one row written,
// one failed), reports a shard read, a lease round and a given-up record,
// and serves it all on a loopback admin server.
func served(t *testing.T, ready func(context.Context) error) (*admin.Server, *telemetry.Metrics) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := telemetry.New(telemetry.Options{})
	f := opstest.Start(t, "", host.WithCallObserver(m.PluginCall))
	m.ServePlugins(f.Host)
	recs := append(f.Append(t, "a", 0, opstest.Add(2), opstest.Add(3)), f.Append(t, "b", 0, opstest.Fail())...)
	m.ShardRead("Acct", "shardId-0001", len(recs), 1500*time.Millisecond)
	res, err := f.Host.ProcessBatch(ctx, recs)
	require.NoError(t, err)
	m.BatchProcessed("Acct", "shardId-0001", res, 20*time.Millisecond, nil)
	m.LeasesHeld("worker-7", "Acct", []string{"shardId-0001"}, 2)
	m.RecordGivenUp("ledger", "Acct", "shardId-0001", recs[2], "row failed: <Boom> event type Fail")
	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:0", Metrics: m, Ready: ready})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv, m
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// /metrics is the Prometheus text format and carries the batch's numbers.
func TestX1_MetricsEndpointServesTheBatch(t *testing.T) {
	srv, _ := served(t, nil)
	code, body := get(t, srv.URL()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	one := func(name string) float64 {
		f, ok := fams[name]
		require.True(t, ok, "%s is served", name)
		require.Len(t, f.Metric, 1, name)
		s := f.Metric[0]
		if s.Counter != nil {
			return s.Counter.GetValue()
		}
		return s.Gauge.GetValue()
	}
	assert.Equal(t, 2.0, one("dynafold_events_applied_total"))
	assert.Equal(t, 1.0, one("dynafold_rows_written_total"))
	assert.Equal(t, 1.0, one("dynafold_rows_failed_total"))
	assert.Equal(t, 1.0, one("dynafold_records_failed_total"))
	assert.Equal(t, 3.0, one("dynafold_records_read_total"))
	assert.Equal(t, 1.5, one("dynafold_shard_iterator_age_seconds"))
	assert.GreaterOrEqual(t, one("dynafold_shard_lag_seconds"), 1.5)
	assert.Equal(t, 1.0, one("dynafold_leases_held"))
	assert.Equal(t, 2.0, one("dynafold_shards"))
	assert.Equal(t, 1.0, one("dynafold_records_given_up_total"))
	info := fams["dynafold_plugin_info"]
	require.NotNil(t, info)
	assert.Contains(t, info.Metric[0].String(), "ledger@1.0.0")
	calls := fams["dynafold_plugin_call_duration_seconds"]
	require.NotNil(t, calls)
	assert.NotZero(t, calls.Metric[0].Histogram.GetSampleCount())
}

// /healthz answers while the process runs; /readyz follows the readiness
// function: not ready before the first lease round, ready after.
func TestX1_HealthAndReadiness(t *testing.T) {
	started := false
	var m *telemetry.Metrics
	srv, m := served(t, func(ctx context.Context) error {
		return admin.ReadyAfterLeaseRound(m, func() bool { return started }, true)(ctx)
	})
	code, body := get(t, srv.URL()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	code, body = get(t, srv.URL()+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "still starting")
	started = true
	code, body = get(t, srv.URL()+"/readyz")
	assert.Equal(t, http.StatusOK, code, body)

	fresh := telemetry.New(telemetry.Options{})
	err := admin.ReadyAfterLeaseRound(fresh, nil, true)(context.Background())
	assert.ErrorIs(t, err, admin.ErrNotReady)
	assert.Contains(t, err.Error(), "no lease round")
	assert.NoError(t, admin.ReadyAfterLeaseRound(fresh, nil, false)(context.Background()))
}

// The status page lists the shard with its owner and lag, the plugin
// serving and the failure given up.
func TestX1_StatusPageShowsShardsPluginsAndFailures(t *testing.T) {
	srv, _ := served(t, nil)
	code, body := get(t, srv.URL()+"/")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{"<table id=\"shards\">", "shardId-0001", "worker-7", "1.5s",
		"<td>ledger</td><td>ledger@1.0.0</td>", "row failed: &lt;Boom&gt; event type Fail"} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, "<Boom>", "the reason is escaped")
	code, _ = get(t, srv.URL()+"/nope")
	assert.Equal(t, http.StatusNotFound, code)
}

// A non-loopback address is refused, naming the setting that allows it.
func TestX1_NonLoopbackAddressIsRefused(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	_, err := admin.Start(context.Background(), admin.Options{Addr: "0.0.0.0:0", Metrics: m, AllowFlag: "--admin-allow-non-loopback"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, admin.ErrNonLoopback))
	assert.Contains(t, err.Error(), "--admin-allow-non-loopback")
	srv, err := admin.Start(context.Background(), admin.Options{Addr: "0.0.0.0:0", Metrics: m, AllowNonLoopback: true})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	_, err = admin.Start(context.Background(), admin.Options{Metrics: m})
	assert.ErrorContains(t, err, "no address")
}

// The configuration's admin section starts the server; without it there
// is none; a non-loopback address is refused naming the setting; a
// malformed address is a configuration error.
func TestX1_AdminServerFromTheConfiguration(t *testing.T) {
	ctx := context.Background()
	m := telemetry.New(telemetry.Options{})
	srv, err := admin.StartConfig(ctx, nil, admin.Options{Metrics: m})
	require.NoError(t, err)
	assert.Nil(t, srv, "off unless configured")
	srv, err = admin.StartConfig(ctx, &host.AdminConfig{Addr: "127.0.0.1:0"}, admin.Options{Metrics: m})
	require.NoError(t, err)
	code, _ := get(t, srv.URL()+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	require.NoError(t, srv.Close())
	_, err = admin.StartConfig(ctx, &host.AdminConfig{Addr: "0.0.0.0:0"}, admin.Options{Metrics: m})
	assert.ErrorIs(t, err, admin.ErrNonLoopback)
	assert.ErrorContains(t, err, `"allowNonLoopback": true`)

	base := `{"eventStore": {"table": "events", "schema": "t", "streams": [{"name": "A", "composite": ["id"]}]},
	  "projections": [{"name": "p", "plugin": "native:x", "table": "rows", "checkpoint": {"field": "version"}}], "admin": %s}`
	cfg, err := host.ParseConfig([]byte(strings.Replace(base, "%s", `{"addr": "127.0.0.1:9100"}`, 1)))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9100", cfg.Admin.Addr)
	_, err = host.ParseConfig([]byte(strings.Replace(base, "%s", `{"addr": "9100"}`, 1)))
	assert.ErrorContains(t, err, `admin.addr: "9100" is not HOST:PORT`)
}
