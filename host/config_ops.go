package host

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FreshnessConfig is a projection's freshness objectives, by percentile:
//
//	"freshness": {"p95": "30s", "p99": "2m"}
//
// reads "95% of the events are applied within 30 seconds of their change,
// 99% within 2 minutes". Freshness is measured per event applied, from the
// change's creation (the stream record's ApproximateCreationDateTime, else
// the event's timestamp) to the commit of the row write that applied it.
// Any percentile above 0 and below 100 may be named ("p50", "p99.9").
type FreshnessConfig map[string]Duration

// Objective is one freshness objective of one projection: Percent of its
// events applied within Threshold.
type Objective struct {
	Projection string
	Name       string  // as configured: "p95"
	Percent    float64 // 95
	Threshold  time.Duration
}

// Budget is the share of events the objective allows to be later than its
// threshold: 1 - Percent/100 (0.05 for p95).
func (o Objective) Budget() float64 { return (100 - o.Percent) / 100 }

// Objectives returns the projection's objectives, lowest percentile first.
func (f FreshnessConfig) objectives(projection string) []Objective {
	var out []Objective
	for name, d := range f {
		pct, err := parsePercentile(name)
		if err != nil || d <= 0 {
			continue
		}
		out = append(out, Objective{Projection: projection, Name: name, Percent: pct, Threshold: time.Duration(d)})
	}
	slices.SortFunc(out, func(a, b Objective) int {
		switch {
		case a.Percent < b.Percent:
			return -1
		case a.Percent > b.Percent:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Objectives returns every projection's freshness objectives, in
// configuration order, each projection's lowest percentile first.
func (c *Config) Objectives() []Objective {
	var out []Objective
	for _, p := range c.Projections {
		out = append(out, p.Freshness.objectives(p.Name)...)
	}
	return out
}

// parsePercentile reads "p95" or "p99.9" as 95 or 99.9.
func parsePercentile(name string) (float64, error) {
	num, ok := strings.CutPrefix(name, "p")
	if !ok || num == "" || strings.ContainsAny(num, "eE+-_ ") {
		return 0, fmt.Errorf("%q is not a percentile: write p followed by a number between 0 and 100, such as \"p95\" or \"p99.9\"", name)
	}
	pct, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(pct) || pct <= 0 || pct >= 100 {
		return 0, fmt.Errorf("%q is not a percentile: write p followed by a number between 0 and 100, such as \"p95\" or \"p99.9\"", name)
	}
	return pct, nil
}

// RateLimitConfig bounds what one projection applies per second, per
// worker: each `host run` process (and each Lambda execution environment)
// has its own buckets, so a fleet of N workers applies up to N times the
// rate. A batch that would exceed it waits for tokens (it never fails for
// it): its events are taken from one bucket and its rows from the other
// before the projection applies it, in pieces of at most Burst. The time
// spent waiting is the metric dynafold_rate_limit_wait_seconds_total; the
// change feed's lag shows what the limit costs.
//
//	"rateLimit": {"eventsPerSecond": 2000, "burst": 500}
type RateLimitConfig struct {
	// EventsPerSecond is the average number of events the projection
	// applies per second (0: no limit on events).
	EventsPerSecond float64 `json:"eventsPerSecond,omitempty"`
	// WritesPerSecond is the average number of row writes per second (0:
	// no limit on writes); a batch counts one write per row it touches.
	WritesPerSecond float64 `json:"writesPerSecond,omitempty"`
	// Burst is how many events (and writes) may go at once above the
	// average (absent or 0: one second's worth of each rate, at least 1).
	Burst int `json:"burst,omitempty"`
}

// validateOps checks the freshness objectives and the rate limit of a
// projection; at names a field's JSON path.
func (p *ProjectionConfig) validateOps(ps *problems, at func(string) string) {
	names := make([]string, 0, len(p.Freshness))
	for name := range p.Freshness {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := at("freshness." + name)
		if _, err := parsePercentile(name); err != nil {
			ps.add(path, "%v", err)
			continue
		}
		if d := p.Freshness[name]; d <= 0 {
			ps.add(path, "%s is not a positive duration: write how soon that share of the events must be applied, such as \"30s\" or \"2m\"", d)
		}
	}
	r := p.RateLimit
	if r == nil {
		return
	}
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(r.EventsPerSecond) {
		ps.add(at("rateLimit.eventsPerSecond"), "%v is not a rate: use a positive number of events per second, or 0 (or absent) for no limit on events", r.EventsPerSecond)
	}
	if bad(r.WritesPerSecond) {
		ps.add(at("rateLimit.writesPerSecond"), "%v is not a rate: use a positive number of row writes per second, or 0 (or absent) for no limit on writes", r.WritesPerSecond)
	}
	if r.Burst < 0 {
		ps.add(at("rateLimit.burst"), "%d is negative: use 1 or more (absent or 0: one second's worth of each rate)", r.Burst)
	}
	if r.EventsPerSecond == 0 && r.WritesPerSecond == 0 {
		ps.add(at("rateLimit"), "sets no rate: set eventsPerSecond, writesPerSecond or both, or remove rateLimit")
	}
}

// Objectives returns the host's freshness objectives (Config.Objectives).
func (h *Host) Objectives() []Objective { return h.cfg.Objectives() }
