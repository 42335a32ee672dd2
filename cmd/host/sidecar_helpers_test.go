package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
)

// sidecarEnv is a ddblocal and a `host run` configuration for the
// order-summary plugin: events, summaries and leases tables, and what the
// test adds (sidecar fields, more sections).
type sidecarEnv struct {
	env     *testenv.Env
	dir     string
	cfgPath string
	// projection is more members of the projection (with a leading comma),
	// written by the next write
	projection string
}

// newSidecarEnv writes the configuration; sidecar is the inside of the
// "sidecar" object after leaseTable (e.g. `"leaseDuration": "1s"`), extra
// more top-level members (with a leading comma) or "".
func newSidecarEnv(t *testing.T, so ddblocal.StreamOptions, sidecar, extra string) *sidecarEnv {
	t.Helper()
	env := testenv.Start(t, func(o *ddblocal.Options) { o.Streams = so })
	dir := t.TempDir()
	e := &sidecarEnv{env: env, dir: dir, cfgPath: filepath.Join(dir, "dynafold.json")}
	e.write(t, env.Server.Endpoint(), sidecar, extra)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	return e
}

// write (re)writes the configuration file.
func (e *sidecarEnv) write(t *testing.T, endpoint, sidecar, extra string) {
	t.Helper()
	if sidecar != "" {
		sidecar = ", " + sidecar
	}
	poll := `, "pollInterval": "20ms"`
	if strings.Contains(sidecar, `"pollInterval"`) {
		poll = "" // the test's own
	}
	plugin := filepath.Join(e.dir, "orders.wasm")
	if _, err := os.Stat(plugin); err != nil {
		b, err := os.ReadFile(v1Path(t))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(plugin, b, 0o644))
	}
	require.NoError(t, os.WriteFile(e.cfgPath, fmt.Appendf(nil, `{
  "endpoint": %q,
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": "summaries", "checkpoint": {"field": "version"}, "writtenBy": "writtenBy"%s}],
  "sidecar": {"leaseTable": "leases", "batchSize": 5%s%s}%s
}`, endpoint, e.projection, poll, sidecar, extra), 0o644))
}

// createTables runs `host tables create`.
func (e *sidecarEnv) createTables(t *testing.T) {
	t.Helper()
	old := tablesOut
	tablesOut = &syncbuf.Buffer{}
	defer func() { tablesOut = old }()
	require.NoError(t, runTables(context.Background(), []string{"create", "--config", e.cfgPath}))
}

// place appends two events to order id.
func (e *sidecarEnv) place(t *testing.T, id string) {
	t.Helper()
	cfg, err := host.LoadConfig(e.cfgPath)
	require.NoError(t, err)
	es, err := host.New(context.Background(), cfg, host.WithEventStoreOnly(), host.WithClient(e.env.Client))
	require.NoError(t, err)
	defer es.Close(context.Background())
	_, err = es.Append(context.Background(), "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("2.50")}})
	require.NoError(t, err)
}

// folded waits until order id's row has both events.
func (e *sidecarEnv) folded(t *testing.T, id string, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		it := e.env.Get(t, "summaries", abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
		if it != nil && it["version"].Str == "2" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %s was not folded in 60 s; log:\n%s", id, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// inProcessRun is `host run` running in this process.
type inProcessRun struct {
	logs   *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

// startRun runs `host run --config F ARGS` in the background, its log in
// logs (runErr is shared: one in-process run at a time).
func (e *sidecarEnv) startRun(t *testing.T, args ...string) *inProcessRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	return e.startRunCtx(t, ctx, cancel, args...)
}

// startRunCtx is startRun under ctx, which cancel ends.
func (e *sidecarEnv) startRunCtx(t *testing.T, ctx context.Context, cancel context.CancelFunc, args ...string) *inProcessRun {
	t.Helper()
	r := &inProcessRun{logs: &syncbuf.Buffer{}, done: make(chan error, 1), cancel: cancel}
	old := runErr
	runErr = r.logs
	go func() { r.done <- runRun(ctx, append([]string{"--config", e.cfgPath}, args...)) }()
	t.Cleanup(func() {
		r.stop(t)
		runErr = old
	})
	return r
}

// stop cancels the run (a graceful stop, as SIGTERM) and returns its error.
func (r *inProcessRun) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("host run did not stop 60 s after its context ended; log:\n%s", r.logs)
		return nil
	}
}
