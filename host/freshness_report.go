package host

import (
	"math"
	"slices"
	"time"
)

// FreshnessReport is one projection's freshness over a recent window, as a
// histogram, beside its objectives: what `host status` and the status page
// show against the SLO. Reports of several workers with the same Bounds
// add up (Merge).
type FreshnessReport struct {
	Projection string
	Window     time.Duration // the span the counts cover
	// Bounds are the histogram's upper bounds in seconds, ascending;
	// Counts[i] counts the events applied within Bounds[i] and not within
	// Bounds[i-1], and Counts[len(Bounds)] those later than the last bound.
	Bounds     []float64
	Counts     []int64
	Objectives []Objective
}

// Events is the number of events the report counts.
func (r FreshnessReport) Events() int64 {
	var n int64
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// Within is the number of events applied within d: exact when d is one of
// Bounds (every objective's threshold is), else counting the buckets wholly
// within d.
func (r FreshnessReport) Within(d time.Duration) int64 {
	var n int64
	for i, b := range r.Bounds {
		if b > d.Seconds()+1e-9 || i >= len(r.Counts) {
			break
		}
		n += r.Counts[i]
	}
	return n
}

// Quantile estimates the freshness below which q (0 to 1) of the events
// were applied, interpolating within a bucket as Prometheus's
// histogram_quantile does; 0 without events, and the last bound when the
// quantile lies beyond it.
func (r FreshnessReport) Quantile(q float64) time.Duration {
	total := r.Events()
	if total == 0 || len(r.Bounds) == 0 {
		return 0
	}
	rank := q * float64(total)
	var cum float64
	lower := 0.0
	for i, b := range r.Bounds {
		c := float64(r.Counts[i])
		if cum+c >= rank && c > 0 {
			s := lower + (b-lower)*(rank-cum)/c
			return time.Duration(s * float64(time.Second))
		}
		cum += c
		lower = b
	}
	return time.Duration(r.Bounds[len(r.Bounds)-1] * float64(time.Second))
}

// ObjectiveStatus is how one objective fares in a report.
type ObjectiveStatus struct {
	Objective
	Events int64         // events counted
	Within int64         // of them, applied within the threshold
	Share  float64       // Within / Events (1 without events)
	Met    bool          // Share reaches Percent
	Actual time.Duration // the estimated freshness at the objective's percentile
}

// Status returns each objective's status over the report's window.
func (r FreshnessReport) Status() []ObjectiveStatus {
	total := r.Events()
	out := make([]ObjectiveStatus, 0, len(r.Objectives))
	for _, o := range r.Objectives {
		st := ObjectiveStatus{Objective: o, Events: total, Within: r.Within(o.Threshold), Share: 1}
		if total > 0 {
			st.Share = float64(st.Within) / float64(total)
			st.Actual = r.Quantile(o.Percent / 100)
		}
		st.Met = st.Share*100 >= o.Percent-1e-9
		out = append(out, st)
	}
	return out
}

// Merge adds another report of the same projection and bounds (another
// worker's) to r; a report with other bounds is left out and Merge reports
// false.
func (r *FreshnessReport) Merge(o FreshnessReport) bool {
	if !slices.Equal(r.Bounds, o.Bounds) || len(r.Counts) != len(o.Counts) {
		return false
	}
	for i := range r.Counts {
		r.Counts[i] += o.Counts[i]
	}
	r.Window = max(r.Window, o.Window)
	return true
}

// DefaultFreshnessBounds are the freshness histogram's bucket bounds in
// seconds, before every objective's threshold is added (FreshnessBounds).
var DefaultFreshnessBounds = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// FreshnessBounds returns the freshness histogram's bucket bounds for a
// set of objectives: DefaultFreshnessBounds and every threshold, so that
// the share of events within a threshold is read exactly from a bucket.
func FreshnessBounds(objectives []Objective) []float64 {
	out := slices.Clone(DefaultFreshnessBounds)
	for _, o := range objectives {
		out = append(out, o.Threshold.Seconds())
	}
	slices.Sort(out)
	return slices.CompactFunc(out, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
}
