package lambda

import (
	"encoding/json"
	"time"

	"github.com/dynafold/dynafold/host"
)

// The metrics written per projection, with dimensions Source and
// Projection: the freshness of every event applied (a value per event, so
// CloudWatch keeps percentiles and percentile ranks), and the time the
// batch waited for the projection's rate limit.
const (
	FreshnessMetric     = "Freshness"
	RateLimitWaitMetric = "RateLimitWait"
)

// emfValuesPerLine is the most values one metric may have in an embedded
// metric format document.
const emfValuesPerLine = 100

// writeProjections writes, for each projection that declares freshness
// objectives, or that waited for its rate limit, lines of the freshness of
// the events the batch applied (at most 100 values per line) and the
// rate-limit wait, dimensions Source and Projection. Other projections add
// no line: the invocation's one line stays the only one.
func (m *emf) writeProjections(source string, h *host.Host, res *host.Result, now time.Time) error {
	if h == nil || res == nil {
		return nil
	}
	declared := map[string]bool{}
	for _, o := range h.Objectives() {
		declared[o.Projection] = true
	}
	for _, p := range h.Projections() {
		if !declared[p] && res.Projections[p].RateWait == 0 {
			continue
		}
		var vals []float64
		res.Freshness(p, func(d time.Duration) { vals = append(vals, float64(d.Microseconds())/1000) })
		wait := res.Projections[p].RateWait
		for first := true; first || len(vals) > 0; first = false {
			n := min(len(vals), emfValuesPerLine)
			doc := map[string]any{"Source": source, "Projection": p}
			var defs []map[string]string
			if n > 0 {
				doc[FreshnessMetric] = vals[:n]
				defs = append(defs, map[string]string{"Name": FreshnessMetric, "Unit": "Milliseconds"})
			}
			if first && wait > 0 {
				doc[RateLimitWaitMetric] = float64(wait.Microseconds()) / 1000
				defs = append(defs, map[string]string{"Name": RateLimitWaitMetric, "Unit": "Milliseconds"})
			}
			vals = vals[n:]
			if len(defs) == 0 {
				break
			}
			doc["_aws"] = map[string]any{
				"Timestamp": now.UnixMilli(),
				"CloudWatchMetrics": []any{map[string]any{
					"Namespace": MetricsNamespace, "Dimensions": [][]string{{"Source", "Projection"}}, "Metrics": defs,
				}},
			}
			b, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			m.mu.Lock()
			_, err = m.w.Write(append(b, '\n'))
			m.mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}
