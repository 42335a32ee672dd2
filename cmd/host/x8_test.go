package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
)

func pauseOutput(paused bool, args ...string) (string, error) {
	var out bytes.Buffer
	old := pauseOut
	pauseOut = &out
	defer func() { pauseOut = old }()
	err := runPause(context.Background(), args, paused)
	return out.String(), err
}

// `host pause` and `host resume` write the lease table directly (no worker
// needs to run), and `host status` shows the projection paused, by whom and
// why, then applying again; a projection the configuration lacks is
// refused, naming those it has.
func TestX8_PauseAndResumeCommandsShowInStatus(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, "", "")
	e.createTables(t)
	out, err := pauseOutput(true, "--config", e.cfgPath, "--projection", "summaries", "--reason", "reindexing search", "--by", "ops")
	require.NoError(t, err)
	assert.Contains(t, out, "projection summaries paused in lease table leases")

	status := func() projectionJSON {
		out, _ := statusOutput("--config", e.cfgPath, "--json", "--no-lag") // no worker runs: it exits 1 for the unread shard

		var v fleetJSON
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.Len(t, v.Projections, 1, out)
		return v.Projections[0]
	}
	p := status()
	assert.True(t, p.Paused)
	assert.Equal(t, "ops", p.By)
	assert.Equal(t, "reindexing search", p.Reason)
	text, _ := statusOutput("--config", e.cfgPath, "--no-lag")
	assert.Contains(t, text, "PROJECTION")
	assert.Contains(t, text, "by ops: reindexing search")

	_, err = pauseOutput(false, "--config", e.cfgPath, "--projection", "summaries")
	require.NoError(t, err)
	assert.False(t, status().Paused)

	_, err = pauseOutput(true, "--config", e.cfgPath, "--projection", "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown projection "nope": the configuration has [summaries]`)
}

// `host alerts` writes a Prometheus rule file or a CloudFormation
// template for the configuration's objectives, and refuses a configuration
// without objectives and a format it does not know, saying what to do.
func TestX7_AlertsCommandWritesRulesForTheObjectives(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, "", "")
	var out bytes.Buffer
	old := alertsOut
	alertsOut = &out
	defer func() { alertsOut = old }()
	err := runAlerts(context.Background(), []string{"--config", e.cfgPath, "--format", "prometheus"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no projection declares freshness objectives: add "freshness"`)

	e.projection = `, "freshness": {"p95": "30s", "p99": "2m"}`
	e.write(t, e.env.Server.Endpoint(), "", "")
	require.NoError(t, runAlerts(context.Background(), []string{"--config", e.cfgPath, "--format", "prometheus"}))
	assert.Contains(t, out.String(), `le=~"30|30\\.0"`)
	assert.Contains(t, out.String(), "alert: 'DynafoldFreshnessBudgetBurn'")

	file := filepath.Join(t.TempDir(), "alarms.json")
	require.NoError(t, runAlerts(context.Background(), []string{"--config", e.cfgPath, "--format", "cloudwatch", "--out", file}))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var tpl map[string]any
	require.NoError(t, json.Unmarshal(b, &tpl))
	assert.Contains(t, tpl, "Resources")

	err = runAlerts(context.Background(), []string{"--config", e.cfgPath, "--format", "datadog"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "use prometheus or cloudwatch"), err)
}
