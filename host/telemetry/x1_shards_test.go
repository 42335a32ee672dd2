package telemetry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/telemetry"
)

// A worker that read three shards and then holds only one (the others
// handed over, lost or finished, as its next lease round reports) exports
// the lag and iterator age of that one only, and its status lists that one
// only: the others' lag would climb forever and fire the lag alert on a
// healthy fleet. Another stream's shards are left alone.
func TestX1_ShardsNoLongerHeldLoseTheirSeries(t *testing.T) {
	now := time.Unix(1000, 0)
	m := telemetry.New(telemetry.Options{Now: func() time.Time { return now }})
	for _, sh := range []string{"s439", "s440", "s441"} {
		m.ShardRead("Acct", sh, 1, time.Second)
	}
	m.ShardRead("Other", "s1", 1, time.Second)
	m.LeasesHeld("w2", "Acct", []string{"s439", "s440", "s441"}, 3)
	now = now.Add(10 * time.Minute)
	m.LeasesHeld("w2", "Acct", []string{"s439"}, 3)
	m.ShardRead("Acct", "s439", 1, time.Second)

	for _, name := range []string{"dynafold_shard_lag_seconds", "dynafold_shard_iterator_age_seconds"} {
		_, ok := value(t, m, name, map[string]string{"stream": "Acct", "shard": "s439"})
		assert.True(t, ok, "%s of the shard held", name)
		for _, gone := range []string{"s440", "s441"} {
			_, ok := value(t, m, name, map[string]string{"stream": "Acct", "shard": gone})
			assert.False(t, ok, "%s of %s, no longer held", name, gone)
		}
		_, ok = value(t, m, name, map[string]string{"stream": "Other", "shard": "s1"})
		assert.True(t, ok, "%s of another stream's shard", name)
	}
	lag, _ := value(t, m, "dynafold_shard_lag_seconds", map[string]string{"stream": "Acct", "shard": "s439"})
	assert.Equal(t, 1.0, lag)
	var shards []string
	for _, s := range m.Status().Shards {
		if s.Stream == "Acct" {
			shards = append(shards, s.Shard)
		}
	}
	require.Equal(t, []string{"s439"}, shards)
}
