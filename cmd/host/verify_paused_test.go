package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// A projection paused across the fleet holds back the events appended
// since on purpose: verify counts the rows they make as pending, says the
// projection is paused, and exits 0; an event from before the pause that
// no row has is drift all the same. Before, a maintenance pause longer
// than the grace was reported as drift (exit 1).
func TestV1_VerifyCountsWhatAPauseHoldsBackAsPending(t *testing.T) {
	ctx := context.Background()
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, "", "")
	e.createTables(t)
	cfg, err := host.LoadConfig(e.cfgPath)
	require.NoError(t, err)
	require.NoError(t, sidecar.SetPaused(ctx, cfg, e.env.Client, "summaries", true, "ops", "reindexing"))
	time.Sleep(20 * time.Millisecond)
	e.place(t, "o-1") // held back: no worker applies it while paused

	code, out, errOut := verifyRun(t, "verify", "--config", e.cfgPath, "--grace", "1ms")
	require.Equal(t, 0, code, "what the pause holds back is pending: %s\n%s", out, errOut)
	assert.Contains(t, errOut, "projection summaries is paused since ")
	assert.Contains(t, errOut, "by ops (reindexing)")
	assert.Contains(t, out, "0 missing")
	assert.Contains(t, out, "2 events pending")

	// resumed (and no worker to catch up): the same row is drift
	require.NoError(t, sidecar.SetPaused(ctx, cfg, e.env.Client, "summaries", false, "ops", ""))
	code, out, errOut = verifyRun(t, "verify", "--config", e.cfgPath, "--grace", "1ms")
	require.Equal(t, 1, code, "%s\n%s", out, errOut)
	assert.NotContains(t, errOut, "is paused")
	assert.Contains(t, out, `missing  summaries {"pk":"OrderSummary#o-1"`)
}
