// Package alerts writes alerting rules for a configuration's freshness
// objectives: Prometheus rule files for `host run` (the metrics of
// host/telemetry) and CloudWatch alarms, as a CloudFormation template, for
// the Lambda handler (the embedded metric format of host/lambda).
//
// Each objective ("p95 within 30s") allows a share of late events, its
// error budget (5%). The alerts fire on the rate at which that budget
// burns, over two windows at once (a long one that proves it lasts, a short
// one that proves it still goes on), as the Google SRE workbook's
// multi-window, multi-burn-rate alerts do:
//
//	severity  long window  short window  burn rate  budget spent
//	page      1h           5m            14.4       2% of 30 days in 1 hour
//	page      6h           30m           6          5% of 30 days in 6 hours
//	ticket    1d           2h            3          10% of 30 days in 1 day
//
// Beside them: the change feed's iterator age above the largest threshold
// (every event then misses), records reported failed for 15 minutes,
// records given up, a delivery breaker open for 10 minutes, a
// projection paused for an hour, and a continuous verification pass that
// found drift or rows it could not check in the last hour.
package alerts

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
)

// BurnWindow is one multi-window burn-rate alert: it fires when the share
// of late events over both Long and Short exceeds Burn times the budget.
type BurnWindow struct {
	Severity    string
	Long, Short time.Duration
	Burn        float64
}

// Windows are the burn-rate alerts written for each objective.
var Windows = []BurnWindow{
	{"page", time.Hour, 5 * time.Minute, 14.4},
	{"page", 6 * time.Hour, 30 * time.Minute, 6},
	{"ticket", 24 * time.Hour, 2 * time.Hour, 3},
}

// Options tunes the rules beside the objectives; the zero value takes the
// defaults.
type Options struct {
	// Source names what the rules were made from (the configuration
	// file), for the files' header.
	Source string
	// LagThreshold is the iterator age that alerts (default: the largest
	// objective threshold, else 5 minutes).
	LagThreshold time.Duration
}

// ErrNoObjectives is the error of a configuration that declares no
// freshness objective: there is nothing to alert on.
var ErrNoObjectives = fmt.Errorf(`no projection declares freshness objectives: add "freshness": {"p95": "30s", "p99": "2m"} to the projections whose freshness you promise`)

func (o Options) lag(objs []host.Objective) time.Duration {
	if o.LagThreshold > 0 {
		return o.LagThreshold
	}
	var d time.Duration
	for _, ob := range objs {
		d = max(d, ob.Threshold)
	}
	if d == 0 {
		d = 5 * time.Minute
	}
	return d
}

// promDuration writes d as a Prometheus duration ("5m", "1h", "1d").
func promDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", int64(math.Ceil(d.Seconds())))
}

// leMatcher is a regular expression matching the le label of the bucket
// of bound seconds as client_golang writes it ("30") and as Prometheus 3
// stores it ("30.0").
func leMatcher(seconds float64) string {
	g := strconv.FormatFloat(seconds, 'g', -1, 64)
	forms := []string{regexp.QuoteMeta(g)}
	if !strings.ContainsAny(g, ".eIN") {
		forms = append(forms, regexp.QuoteMeta(g+".0"))
	}
	return strings.Join(forms, "|")
}

// number writes f rounded to 9 decimals, without an exponent or trailing
// zeros (14.4 × 0.05 is 0.72, not 0.7200000000000001).
func number(f float64) string { return strconv.FormatFloat(math.Round(f*1e9)/1e9, 'f', -1, 64) }

// ruleID turns a projection name and objective into an identifier of
// letters and digits, for CloudFormation logical ids.
func ruleID(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		up := true
		for _, r := range p {
			switch {
			case r >= 'a' && r <= 'z':
				if up {
					r -= 'a' - 'A'
				}
				b.WriteRune(r)
				up = false
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				b.WriteRune(r)
				up = false
			default:
				up = true
			}
		}
	}
	return b.String()
}
