package sidecar_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// exported returns the shard label values of the metric name in m.
func exported(t *testing.T, m *telemetry.Metrics, name string) []string {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var shards []string
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == "shard" {
					shards = append(shards, l.GetValue())
				}
			}
		}
	}
	slices.Sort(shards)
	return shards
}

// A worker whose shards finish (the stream rolls over) stops exporting
// their lag and iterator age: only the shards it holds are left. Before,
// a finished or handed-over shard kept its series, its lag climbing for
// ever, and fired the lag alert on a healthy fleet.
func TestX1_FinishedShardsLeaveTheLagMetrics(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 3}, host.SidecarConfig{BatchSize: 2})
	h := e.host(t, &testlogic.Ledger{})
	m := telemetry.New(telemetry.Options{})
	stop := run(e.reader(t, h, "w1", m))
	defer stop(nil)
	for v := range 10 {
		appendAdds(t, h, "a", v, 1)
	}
	e.waitRows(t, map[string]string{"a": foldLog(10)}, time.Minute)
	var finished int
	eventually(t, "only held shards are exported", func() (bool, string) {
		var open []string
		finished = 0
		for k, l := range e.leases(t) {
			if l.checkpoint == lease.ShardEnd {
				finished++
			} else if l.owner == "w1" {
				open = append(open, k)
			}
		}
		slices.Sort(open)
		lag, age := exported(t, m, "dynafold_shard_lag_seconds"), exported(t, m, "dynafold_shard_iterator_age_seconds")
		return finished >= 2 && slices.Equal(lag, open) && slices.Equal(age, open),
			fmt.Sprintf("held open %v, %d finished; lag exported for %v, iterator age for %v", open, finished, lag, age)
	})
}
