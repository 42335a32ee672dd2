package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// An effect its consumer refuses for good (HTTP 400) holds back the row's
// later effects; `host drain --skip 1` removes it without delivery,
// printing it, and delivers the rest in order.
func TestO2_DrainSkipSetsAsideAnEffectTheConsumerRefusesForGood(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "Oslo") {
			w.WriteHeader(http.StatusBadRequest) // never accepted
			return
		}
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	}))
	defer hook.Close()
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "shipments", false)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "ship", "schemaVersion": 1, "streams": [
    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
    {"name": "Weigh", "composite": ["sessionId"]}]},
  "projections": [{"name": "shipments", "plugin": %q, "table": %q,
    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
    "outbox": {"deliver": {"webhook": {"url": %q}}}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/shipment-summary/wasm"), rows, hook.URL)
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c, host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(ctx)
	for v, place := range []string{"Oslo", "Bergen", "Tromso"} {
		_, err := h.Append(ctx, "Scan", "sh-1", uint64(v), host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S(place)}})
		require.NoError(t, err)
		captureStdout(t, func() {
			require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "sh-1", "--source", "scan"}))
		})
	}
	require.Empty(t, got, "everything waits behind the refused effect")
	row := `{"pk": "Shipment#sh-1", "sk": "S"}`

	out := captureStdout(t, func() {
		err := runDrain(ctx, []string{"--config", cfgPath, "--row", row})
		var ec *exitCode
		require.ErrorAs(t, err, &ec, "an effect left undelivered is exit status 1, as in drain-pending")
		assert.Equal(t, 1, ec.code)
		assert.ErrorContains(t, err, "the row's next effect was left undelivered")
	})
	assert.Contains(t, out, `"status":"undelivered"`)
	assert.Contains(t, out, "HTTP 400")
	assert.Contains(t, out, "--skip 1")

	out = captureStdout(t, func() { require.NoError(t, runDrain(ctx, []string{"--config", cfgPath, "--row", row, "--skip", "1"})) })
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 3, out)
	assert.Contains(t, lines[0], `"status":"skipped"`)
	assert.Contains(t, lines[0], "Oslo")
	assert.Contains(t, lines[1], `"status":"delivered"`)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "Bergen", "in order")
	assert.Contains(t, got[1], "Tromso")

	out = captureStdout(t, func() { require.NoError(t, runDrain(ctx, []string{"--config", cfgPath, "--row", row})) })
	assert.Empty(t, out, "nothing left pending")
}

// drain on a configuration without any outbox says there is nothing to
// deliver and what to add, where it asked for --projection among "[]".
func TestO2_DrainWithoutAnOutboxSaysWhatToAdd(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	err := runDrain(context.Background(), []string{"--config", cfgPath, "--row", "pk=OrderSummary#o-1,sk=OrderSummary"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no projection of the configuration has an outbox")
	assert.NotContains(t, err.Error(), "[]")
}
