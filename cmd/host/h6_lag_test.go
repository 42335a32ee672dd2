package main

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
)

// The status page and `host status` compute a shard's lag one way: the
// age of the oldest record after its checkpoint. The page showed its own
// iterator age plus the time since its last read, so a caught-up shard
// polled every second stood 0-1 s behind on the page and 0 s in host
// status.
func TestC6_StatusPageAndHostStatusShowOneLag(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, `"pollInterval": "1s", "leaseDuration": "30s"`, "")
	e.createTables(t)
	e.place(t, "o-1")
	run := e.startRun(t, "--worker-id", "w1", "--quiet", "--admin-addr", "127.0.0.1:0")
	e.folded(t, "o-1", run.logs)

	var shard string
	deadline := time.Now().Add(time.Minute)
	for { // the checkpoint lands after the fold: wait until status sees the shard caught up
		out, err := statusOutput("--config", e.cfgPath, "--json")
		var v fleetJSON
		if err == nil && json.Unmarshal([]byte(out), &v) == nil && len(v.Shards) == 1 && v.Shards[0].LagMS != nil && *v.Shards[0].LagMS == 0 &&
			regexp.MustCompile(`^\d+$`).MatchString(v.Shards[0].Checkpoint) {
			shard = v.Shards[0].Shard
			break
		}
		require.True(t, time.Now().Before(deadline), "host status never showed the shard caught up: %s %v", out, err)
		time.Sleep(50 * time.Millisecond)
	}
	page := httpGet(t, adminURLFromLogs(t, run.logs.String())+"/")
	row := regexp.MustCompile(`<tr class="mine"><td>` + regexp.QuoteMeta(shard) + `</td><td>open</td><td>w1 \(this worker\)</td><td>\d+</td><td>-</td><td>([^<]*)</td>`).FindStringSubmatch(page)
	require.NotNil(t, row, "the page lists the shard: %s", page)
	require.Equal(t, "0s", row[1], "the page's lag of the caught-up shard, as host status shows it")
	require.Contains(t, page, "as <code>host status</code> shows it")
}
