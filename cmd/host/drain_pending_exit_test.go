package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// drain-pending with nothing listening at the webhook leaves the pending
// effect undelivered: it exits 1 (a scheduler sees the failure), its last
// line says how many effects were left and what happens to them, and its
// warning says the effect waits for the next run, not for `host run`'s sweep.
func TestO2_DrainPendingExitsOneWhenEffectsAreLeftUndelivered(t *testing.T) {
	ctx := context.Background()
	down := httptest.NewServer(nil)
	url := down.URL + "/x"
	down.Close() // nothing listens there
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "ship", "schemaVersion": 1, "streams": [
    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
    {"name": "Weigh", "composite": ["sessionId"]}]},
  "projections": [{"name": "shipments", "plugin": %q, "table": "shipments",
    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
    "outbox": {"index": "pending", "deliver": {"webhook": {"url": %q}}}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/shipment-summary/wasm"), url)
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c)
	require.NoError(t, err)
	defer h.Close(ctx)
	_, err = h.CreateTables(ctx)
	require.NoError(t, err)
	_, err = h.Append(ctx, "Scan", "sh-11", 0, host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S("Oslo")}})
	require.NoError(t, err)
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)
	captureStdout(t, func() {
		require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "sh-11", "--source", "scan"}))
	})
	// the configuration has no sidecar: no host run sweeps its outbox
	assert.Contains(t, logs.String(), "no `host run` sweeps the outbox here, so the next `host drain-pending` run on a schedule delivers it", "catchup's warning")
	logs.Reset()
	var stderr bytes.Buffer
	code := 0
	out := captureStdout(t, func() {
		code = run(ctx, []string{"drain-pending", "--config", cfgPath, "--webhook", url}, &bytes.Buffer{}, &stderr)
	})
	assert.Contains(t, out, `"status":"undelivered"`)
	assert.Equal(t, 1, code, "exit status; stderr: %s", stderr.String())
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	assert.Contains(t, last, "1 effect left undelivered")
	assert.Contains(t, last, "stays first in its row's outbox")
	assert.Contains(t, logs.String(), "outbox effect not delivered")
	assert.Contains(t, logs.String(), "for the next `host drain-pending` run")
	assert.NotContains(t, logs.String(), "or run `host drain-pending` to deliver it now", "drain-pending does not tell to run itself")
}
