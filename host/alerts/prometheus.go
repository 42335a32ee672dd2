package alerts

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
)

// The recording rule that holds the share of late events over a window,
// one series per projection and objective.
const lateRatio = "dynafold:freshness_late:ratio_rate"

// rule is one Prometheus recording or alerting rule.
type rule struct {
	Record, Alert string
	Expr          string
	For           string
	Labels        [][2]string
	Annotations   [][2]string
}

type group struct {
	Name  string
	Rules []rule
}

// Prometheus returns a Prometheus rule file (YAML) for the objectives:
// recording rules of each objective's share of late events over each
// window, the burn-rate alerts of Windows, and the change-feed alerts.
func Prometheus(objs []host.Objective, o Options) ([]byte, error) {
	if len(objs) == 0 {
		return nil, ErrNoObjectives
	}
	var windows []time.Duration
	for _, w := range Windows {
		windows = append(windows, w.Long, w.Short)
	}
	slices.Sort(windows)
	windows = slices.Compact(windows)

	fresh := group{Name: "dynafold-freshness"}
	for _, ob := range objs {
		sel := fmt.Sprintf(`projection=%q`, ob.Projection)
		for _, w := range windows {
			pw := promDuration(w)
			fresh.Rules = append(fresh.Rules, rule{
				Record: lateRatio + pw,
				Expr: fmt.Sprintf(`1 - (sum by (projection) (rate(dynafold_freshness_seconds_bucket{%s,le=~%q}[%s])) / sum by (projection) (rate(dynafold_freshness_seconds_count{%s}[%s])))`,
					sel, leMatcher(ob.Threshold.Seconds()), pw, sel, pw),
				Labels: [][2]string{{"objective", ob.Name}},
			})
		}
	}
	for _, ob := range objs {
		for _, w := range Windows {
			limit := number(w.Burn * ob.Budget())
			sel := fmt.Sprintf(`{projection=%q,objective=%q}`, ob.Projection, ob.Name)
			fresh.Rules = append(fresh.Rules, rule{
				Alert: "DynafoldFreshnessBudgetBurn",
				Expr: fmt.Sprintf(`%s%s%s > %s and %s%s%s > %s`, lateRatio, promDuration(w.Long), sel, limit,
					lateRatio, promDuration(w.Short), sel, limit),
				Labels: [][2]string{{"severity", w.Severity}, {"projection", ob.Projection}, {"objective", ob.Name},
					{"window", promDuration(w.Long)}},
				Annotations: [][2]string{
					{"summary", fmt.Sprintf("Projection %s misses its freshness objective: %s of events within %s", ob.Projection, ob.Name, ob.Threshold)},
					{"description", fmt.Sprintf("{{ $value | humanizePercentage }} of the events of projection %s over the last %s were applied later than %s, burning the %s budget (%s late) %s times faster than a 30-day budget allows. Check the change feed's lag (dynafold_shard_lag_seconds), failed records, a paused projection, its rate limit, and delivery breakers.",
						ob.Projection, promDuration(w.Long), ob.Threshold, ob.Name, number(ob.Budget()*100)+"%", number(w.Burn))},
				},
			})
		}
	}
	lag := o.lag(objs)
	feed := group{Name: "dynafold-feed", Rules: []rule{
		{Alert: "DynafoldIteratorAgeHigh", Expr: fmt.Sprintf(`max by (stream, shard) (dynafold_shard_lag_seconds) > %s`, number(lag.Seconds())), For: "5m",
			Labels: [][2]string{{"severity", "page"}},
			Annotations: [][2]string{{"summary", "A shard of the change feed is behind by more than " + lag.String()},
				{"description", "Shard {{ $labels.shard }} is {{ $value | humanizeDuration }} behind: every event it carries misses the freshness objectives. Check that a worker holds its lease (host status), failed records and the projections' rate limits."}}},
		{Alert: "DynafoldRecordsFailing", Expr: `sum by (stream) (rate(dynafold_records_failed_total[5m])) > 0`, For: "15m",
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "Records keep failing on the change feed"},
				{"description", "Records of {{ $labels.stream }} have been reported failed for 15 minutes; the shard waits on them. The status page lists why."}}},
		{Alert: "DynafoldRecordsGivenUp", Expr: `sum by (projection) (increase(dynafold_records_given_up_total[15m])) > 0`,
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "Records were given up to the on-failure destination"},
				{"description", "{{ $value }} records {{ if $labels.projection }}of projection {{ $labels.projection }}{{ else }}that failed before any projection (an event item that does not decode){{ end }} were given up in 15 minutes; their rows lag until they are replayed (host quarantine replay)."}}},
		{Alert: "DynafoldDeliveryBreakerOpen", Expr: `max by (projection, target) (dynafold_delivery_breaker_state{state="open"}) == 1`, For: "10m",
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "A delivery target's breaker has been open for 10 minutes"},
				{"description", "Effects of projection {{ $labels.projection }} for {{ $labels.target }} wait in the outbox, in order, until the target recovers."}}},
		{Alert: "DynafoldProjectionPaused", Expr: `max by (projection) (dynafold_projection_paused) == 1`, For: "1h",
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "A projection has been paused for an hour"},
				{"description", "Projection {{ $labels.projection }} is paused (host pause): its rows fall behind until host resume."}}},
		{Alert: "DynafoldVerifyDrift", Expr: `max by (projection) (max_over_time(dynafold_verify_drift_rows[1h])) > 0`,
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "Continuous verification found rows that do not match their events"},
				{"description", "A sampled verification pass of projection {{ $labels.projection }} found {{ $value }} rows wrong in the last hour. Run host verify --projection {{ $labels.projection }} to see every row, and --repair to rebuild them."}}},
		{Alert: "DynafoldVerifyUnverified", Expr: `max by (projection) (max_over_time(dynafold_verify_unverified_rows[1h])) > 0`,
			Labels: [][2]string{{"severity", "ticket"}},
			Annotations: [][2]string{{"summary", "Continuous verification could not check some rows"},
				{"description", "A sampled verification pass of projection {{ $labels.projection }} could not check {{ $value }} rows in the last hour (the plugin fails one of their events, or a row is unreadable): they are not verified. Run host verify --projection {{ $labels.projection }} to see why."}}},
	}}

	var b bytes.Buffer
	fmt.Fprintf(&b, "# Alerting rules for the freshness objectives%s, written by `host alerts --format prometheus`.\n", from(o.Source))
	b.WriteString("# Load them with rule_files in prometheus.yml; `promtool check rules` checks them.\n")
	b.WriteString("groups:\n")
	for _, g := range []group{fresh, feed} {
		fmt.Fprintf(&b, "  - name: %s\n    rules:\n", quote(g.Name))
		for _, r := range g.Rules {
			if r.Record != "" {
				fmt.Fprintf(&b, "      - record: %s\n", quote(r.Record))
			} else {
				fmt.Fprintf(&b, "      - alert: %s\n", quote(r.Alert))
			}
			fmt.Fprintf(&b, "        expr: %s\n", quote(r.Expr))
			if r.For != "" {
				fmt.Fprintf(&b, "        for: %s\n", r.For)
			}
			writeMap(&b, "labels", r.Labels)
			writeMap(&b, "annotations", r.Annotations)
		}
	}
	return b.Bytes(), nil
}

func from(source string) string {
	if source == "" {
		return ""
	}
	return " of " + source
}

func writeMap(b *bytes.Buffer, name string, kv [][2]string) {
	if len(kv) == 0 {
		return
	}
	fmt.Fprintf(b, "        %s:\n", name)
	for _, p := range kv {
		fmt.Fprintf(b, "          %s: %s\n", p[0], quote(p[1]))
	}
}

// quote writes s as a YAML single-quoted scalar: no escapes but ”
// for a quote, so expressions read as they are (s has no line breaks).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
