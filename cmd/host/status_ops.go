package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// printProjections writes the projections of the fleet view: applying or
// paused (since when, by whom, why), the stream instances waiting to be
// caught up, and the last hour's freshness against each objective.
func printProjections(w io.Writer, f sidecar.Fleet) error {
	if len(f.Projections) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPROJECTION\tSTATE\tWAITING\tFRESHNESS (LAST HOUR)")
	for _, p := range f.Projections {
		state := "applying"
		if p.Paused {
			state = "paused " + ago(f.At, p.ChangedAt)
			if p.By != "" {
				state += " by " + p.By
			}
			if p.Reason != "" {
				state += ": " + p.Reason
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Name, state, p.Deferred, freshnessLine(p.Freshness, p.Workers))
	}
	return tw.Flush()
}

// freshnessLine says how the last hour fared against each objective:
// "p95 ≤ 30s: 97.1% (met, p95 was 12.3s); …".
func freshnessLine(r *host.FreshnessReport, workers int) string {
	if r == nil {
		return "- (no worker published any)"
	}
	n := r.Events()
	if len(r.Objectives) == 0 {
		return fmt.Sprintf("%d events, p50 %s, p99 %s (no objective declared)", n, round(r.Quantile(0.5)), round(r.Quantile(0.99)))
	}
	if n == 0 {
		return "no event applied"
	}
	var parts []string
	for _, st := range r.Status() {
		verdict := "MISSED"
		if st.Met {
			verdict = "met"
		}
		parts = append(parts, fmt.Sprintf("%s ≤ %s: %.1f%% within (%s, %s was %s)", st.Name, st.Threshold, st.Share*100, verdict, st.Name, round(st.Actual)))
	}
	return fmt.Sprintf("%s; %s from %s", strings.Join(parts, "; "), plural(int(n), "event"), plural(workers, "worker"))
}

func round(d time.Duration) string { return d.Round(time.Millisecond).String() }

// projectionJSON is a projection of `host status --json`.
type projectionJSON struct {
	Projection string          `json:"projection"`
	Paused     bool            `json:"paused"`
	ChangedAt  *time.Time      `json:"changedAt,omitempty"`
	By         string          `json:"changedBy,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Waiting    int             `json:"instancesWaiting"`
	Events     int64           `json:"freshnessEvents"`
	Objectives []objectiveJSON `json:"objectives,omitempty"`
}

type objectiveJSON struct {
	Objective   string  `json:"objective"`
	ThresholdMS int64   `json:"thresholdMillis"`
	Within      float64 `json:"withinShare"`
	Met         bool    `json:"met"`
	ActualMS    int64   `json:"actualMillis"`
}

func projectionsJSONOf(f sidecar.Fleet) []projectionJSON {
	out := []projectionJSON{}
	for _, p := range f.Projections {
		pj := projectionJSON{Projection: p.Name, Paused: p.Paused, By: p.By, Reason: p.Reason, Waiting: p.Deferred}
		if !p.ChangedAt.IsZero() {
			t := p.ChangedAt.UTC()
			pj.ChangedAt = &t
		}
		if r := p.Freshness; r != nil {
			pj.Events = r.Events()
			for _, st := range r.Status() {
				pj.Objectives = append(pj.Objectives, objectiveJSON{Objective: st.Name, ThresholdMS: st.Threshold.Milliseconds(),
					Within: st.Share, Met: st.Met, ActualMS: st.Actual.Milliseconds()})
			}
		}
		out = append(out, pj)
	}
	return out
}
