package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
)

// A module in the watched path that the pipeline refuses does not stop a
// restart: `host run` serves the last accepted version from the archive,
// logs why and names `host plugin rollback`; the broken module never
// replaces the working one.
func TestH2_RunServesTheArchivedVersionWhenTheWatchedModuleIsRefusedAtStart(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{}, "", "")
	e.projection = `, "hotSwap": {"watch": true, "settle": "10ms", "archive": "archive"}`
	e.write(t, e.env.Server.Endpoint(), `"leaseDuration": "1s"`, "")
	e.createTables(t)
	first := e.startRun(t, "--worker-id", "w1", "--quiet")
	e.place(t, "o-1")
	e.folded(t, "o-1", first.logs)
	require.NoError(t, first.stop(t))
	archived, err := filepath.Glob(filepath.Join(e.dir, "archive", "*.wasm"))
	require.NoError(t, err)
	require.Len(t, archived, 1, "the accepted version is archived")

	// a module that does not load replaces the plugin file
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "orders.wasm"), []byte("\x00asm\x01\x00\x00\x00 broken"), 0o644))
	second := e.startRun(t, "--worker-id", "w1", "--quiet", "--admin-addr", "127.0.0.1:0")
	e.place(t, "o-2")
	e.folded(t, "o-2", second.logs)
	row := e.env.Get(t, "summaries", abi.Item{"pk": abi.S("OrderSummary#o-2"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "order-summary@1.0.0", row["writtenBy"].Str, "the archived version folds")
	logs := second.logs.String()
	assert.Contains(t, logs, `"msg":"plugin module refused at start; serving the last accepted version from the archive instead"`)
	assert.Contains(t, logs, "refused at load")
	assert.Contains(t, logs, "host plugin rollback --file "+filepath.Join(e.dir, "orders.wasm"))

	// the status page and the metrics say so
	url := adminURLFromLogs(t, logs)
	metrics := httpGet(t, url+"/metrics")
	assert.Contains(t, metrics, `dynafold_plugin_swaps_total{projection="summaries",result="fallback"} 1`)
	assert.Contains(t, metrics, `dynafold_plugin_swaps_total{projection="summaries",result="refused"} 1`)
	page := httpGet(t, url+"/")
	assert.Regexp(t, `<tr class="refused"><td>[^<]+</td><td>summaries</td><td>refused</td><td>-</td><td>[^<]*orders.wasm</td><td>load</td><td>[^<]*invalid plugin module`, page)
	assert.Regexp(t, `<tr class="refused"><td>[^<]+</td><td>summaries</td><td>fallback</td><td>order-summary@1.0.0</td><td>[^<]*archive[^<]*\.wasm</td>`, page)
	assert.Contains(t, page, "<code>host plugin rollback</code>")
	assert.Contains(t, page, `<strong id="worker">w1</strong>`)
	require.NoError(t, second.stop(t))
}

// Without an archived version to fall back on, a refused module stops the
// start with an explanation of what to do.
func TestH2_RunWithARefusedModuleAndNoArchiveSaysWhy(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{}, "", "")
	e.projection = `, "hotSwap": {"watch": true, "settle": "10ms"}`
	e.write(t, e.env.Server.Endpoint(), `"leaseDuration": "1s"`, "")
	e.createTables(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "orders.wasm"), []byte("\x00asm\x01\x00\x00\x00 broken"), 0o644))
	run := e.startRun(t, "--worker-id", "w1", "--quiet")
	err, done := run.waitDone(t, 60*time.Second)
	require.True(t, done, "log:\n%s", run.logs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refused at load")
	assert.Contains(t, err.Error(), "no accepted plugin version to serve instead: hotSwap.archive is not set")
	assert.Contains(t, err.Error(), "host plugin rollback")
}
