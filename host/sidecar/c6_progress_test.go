package sidecar_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// While a shard waits behind a record that keeps failing (no failure
// policy gives it up), the reader's totals, which `host run`'s progress
// line prints, tell what `host status` tells: the lag is the age of the
// oldest record not yet done (it grows while the record is retried; the
// age of the last record read stayed 0), the shard is held back, records
// done do not count the retries, and the failures are the number the
// status page and dynafold_records_failed_total show.
func TestC6_ReaderStatsTellTheLagOfAShardHeldBackAsHostStatusDoes(t *testing.T) {
	sources := map[string]func(t *testing.T) *env{
		"dynamodb streams": func(t *testing.T) *env { return start(t, ddblocal.StreamOptions{Shards: 1}, host.SidecarConfig{}) },
		// Kinesis says MillisBehindLatest 0 while the failing record is
		// read again: the progress line said "lag 0s" for minutes
		"kinesis": func(t *testing.T) *env { return startKinesis(t, 1, ddblocal.KinesisFaults{}, host.SidecarConfig{}) },
	}
	for name, startEnv := range sources {
		t.Run(name, func(t *testing.T) { heldBackStats(t, startEnv(t)) })
	}
}

func heldBackStats(t *testing.T, e *env) {
	defer sidecar.SetRetryDelay(10 * time.Millisecond)()
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 3)
	_, err := h.Append(context.Background(), testlogic.Stream, "bad", 0, host.NewEvent{Type: "Fail", Data: abi.Item{}})
	require.NoError(t, err)
	appendAdds(t, h, "bad", 1, 2)

	m := telemetry.New(telemetry.Options{})
	r := e.reader(t, h, "w1", m)
	stop := run(r)
	e.waitRows(t, map[string]string{"a": foldLog(3)}, time.Minute)
	time.Sleep(1500 * time.Millisecond) // the failing record retried all along

	st := r.Stats()
	f, err := r.Fleet(context.Background(), sidecar.FleetOptions{Lag: true})
	require.NoError(t, err)
	require.Len(t, f.Shards, 1)
	require.True(t, f.Shards[0].LagKnown)
	assert.GreaterOrEqual(t, st.Behind, time.Second, "the failing record waits: the lag grows")
	assert.InDelta(t, f.Shards[0].Lag.Seconds(), st.Behind.Seconds(), 0.5, "the lag host status shows (the age of the oldest record after the checkpoint)")
	assert.Equal(t, 1, st.HeldBack, "one shard held back by a failing record")
	assert.Equal(t, int64(3), st.Records, "the three records of a are done; the failing one, retried, is not")

	require.NoError(t, stop(nil))
	st = r.Stats()
	assert.Greater(t, st.Failures, int64(1))
	assert.Equal(t, m.Counters().Failures, st.Failures, "the progress line's failures are the status page's")
}
