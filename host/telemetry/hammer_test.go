package telemetry_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
)

// The observer is called from the reader's goroutines concurrently while
// the status page and scrapes read it (run with -race): no count is lost.
func TestX1_ObserverHammer(t *testing.T) {
	m := telemetry.New(telemetry.Options{RecentFailures: 5})
	m.ServePlugins(fakePlugins{})
	const workers, rounds = 8, 200
	var all []string // one worker holds every shard, read by goroutines of their own
	for w := range workers {
		all = append(all, fmt.Sprint("shard-", w))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			shard := fmt.Sprint("shard-", w)
			for i := range rounds {
				m.ShardRead("s", shard, 1, time.Duration(i)*time.Millisecond)
				m.LeasesHeld("w1", "s", all, workers)
				m.RecordGivenUp("p", "s", shard, host.Record{EventID: fmt.Sprint(w, "-", i)}, "x")
				m.PluginCall("p", "evolve", time.Microsecond, nil)
				m.BatchProcessed("s", shard, nil, time.Microsecond, assert.AnError)
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range rounds / 4 {
				_ = m.Status()
				_, err := m.Registry().Gather()
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	read, _ := value(t, m, "dynafold_records_read_total", map[string]string{"stream": "s"})
	given, _ := value(t, m, "dynafold_records_given_up_total", map[string]string{"projection": "p"})
	calls, _ := value(t, m, "dynafold_plugin_call_duration_seconds", map[string]string{"projection": "p"})
	assert.Equal(t, []float64{workers * rounds, workers * rounds, workers * rounds}, []float64{read, given, calls})
	st := m.Status()
	require.Len(t, st.Failures, 5, "only the last N failures are kept")
	assert.Len(t, st.Shards, workers)
}
