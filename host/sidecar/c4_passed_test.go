package sidecar_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestC4_FailuresThatWentThroughInHalvesAreLogged: a batch of a's and b's
// records fails once (b's evolve fails the first time, as a throttled
// write does); delivered again in halves, both go through. The failure was
// counted (the progress line's failures, records_failed_total) and logged
// nowhere: now one warning says records failed and went through, with
// the reason.
func TestC4_FailuresThatWentThroughInHalvesAreLogged(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{BatchSize: 50}) // every record in one batch
	l := &flaky{Ledger: &testlogic.Ledger{}, id: "b", times: 1}
	h := e.host(t, l)
	appendAdds(t, h, "a", 0, 2)
	appendAdds(t, h, "b", 0, 2)
	logs := &syncbuf.Buffer{}
	stop := run(e.readerLogging(t, h, "w1", nil, slog.New(slog.NewTextHandler(logs, nil))))
	e.waitRows(t, map[string]string{"a": foldLog(2), "b": foldLog(2)}, time.Minute)
	require.NoError(t, stop(nil))
	out := logs.String()
	const line = "records failed and went through when delivered again"
	assert.Equal(t, 1, strings.Count(out, line), "one warning; log:\n%s", out)
	assert.Contains(t, out, "not yet", "with the reason")
	assert.NotContains(t, out, "record failed; it is delivered again", "no record failed alone")
}
