package telemetry_test

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/dynafold/dynafold/host/telemetry"
)

// value returns the value of the series name{labels} in m's registry, and
// whether it exists.
func value(t *testing.T, m *telemetry.Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.Metric {
			if match(s, labels) {
				switch {
				case s.Counter != nil:
					return s.Counter.GetValue(), true
				case s.Gauge != nil:
					return s.Gauge.GetValue(), true
				case s.Histogram != nil:
					return float64(s.Histogram.GetSampleCount()), true
				}
			}
		}
	}
	return 0, false
}

func match(s *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range s.Label {
		if v, ok := labels[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}
