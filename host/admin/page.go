package admin

import (
	"bytes"
	"cmp"
	"context"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
)

var page = template.Must(template.New("status").Funcs(template.FuncMap{
	"dur": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format(time.RFC3339)
	},
	"owner": func(s string) string {
		if s == "" {
			return "another worker"
		}
		return s
	},
	"rows": func(n int64) string {
		if n == 1 {
			return "1 row"
		}
		return strconv.FormatInt(n, 10) + " rows"
	},
	"dash": func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	},
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} status</title>
<meta http-equiv="refresh" content="10">
<style>body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}.none{color:#777}
tr.mine{background:#eef6ff}.problem{color:#a00;font-weight:bold}.refused{color:#a00}</style></head>
<body><h1>{{.Title}} status</h1>
<p>Generated {{ts .Now}}.{{if .Worker}} This worker: <strong id="worker">{{.Worker}}</strong>.{{end}} <a href="/metrics">Metrics</a> · <a href="/readyz">Readiness</a></p>
<h2>Counters</h2>
{{with .Status.Counters}}<table id="counters"><tr><th>Records read</th><th>Rows written</th><th>Events applied</th><th>Events rejected</th><th>Events skipped</th><th>Failures</th><th>Given up</th></tr>
<tr><td>{{.RecordsRead}}</td><td>{{.RowsWritten}}</td><td>{{.EventsApplied}}</td><td>{{.EventsRejected}}</td><td>{{.EventsSkipped}}</td><td>{{.Failures}}</td><td>{{.GivenUp}}</td></tr></table>{{end}}
{{if .HasFleet}}<h2>Fleet</h2>
{{if .FleetErr}}<p class="problem">The lease table could not be read: {{.FleetErr}}</p>{{else}}{{with .Fleet}}
<p>Stream {{dash .Stream}} · lease table {{.LeaseTable}} · lease duration {{dur .LeaseDuration}} · read {{ts .At}}</p>
{{range .Problems}}<p class="problem">{{.}}</p>
{{end}}{{if .Shards}}<table id="fleet"><tr><th>Shard</th><th>State</th><th>Owner</th><th>Checkpoint</th><th>Parent</th><th>Lag</th><th>Last write</th></tr>
{{range .Shards}}<tr{{if .Mine}} class="mine"{{end}}><td>{{.ID}}</td><td>{{.State}}</td><td>{{.Owner}}</td><td>{{dash .Checkpoint}}</td><td>{{dash .Parent}}</td><td>{{dash .Lag}}</td><td>{{.LastWrite}}</td></tr>
{{end}}</table>
<p>Lag: the age of the oldest record after the shard's checkpoint (0s: none waits), as <code>host status</code> shows it.</p>{{else}}<p class="none">No shard has a lease yet.</p>{{end}}
<table id="workers"><tr><th>Worker</th><th>Shards held</th><th>Last renewal</th><th>Alive</th></tr>
{{range .Workers}}<tr{{if .Mine}} class="mine"{{end}}><td>{{.ID}}{{if .Mine}} (this worker){{end}}</td><td>{{dash .Held}}</td><td>{{.LastRenewal}}</td><td>{{.Alive}}</td></tr>
{{end}}</table>{{end}}{{end}}{{end}}
{{if .Verify}}<h2>Verification (sampled)</h2>
<table id="verify"><tr><th>Projection</th><th>Last pass</th><th>By</th><th>Rows checked</th><th>Differs</th><th>Missing</th><th>Orphan</th><th>Ahead</th><th>Pending</th><th>Errors</th></tr>
{{range .Verify}}<tr{{if .Drift}} class="refused"{{end}}><td>{{.Projection}}</td><td>{{.LastPass}}</td><td>{{dash .By}}</td><td>{{.Rows}}</td><td>{{.Differs}}</td><td>{{.Missing}}</td><td>{{.Orphan}}</td><td>{{.Ahead}}</td><td>{{.Pending}}</td><td>{{.Errors}}</td></tr>
{{end}}</table>{{range .Verify}}{{if .Drift}}<p class="problem">Drift in {{.Projection}}: {{rows .Drift}} of the last sample not what their events make; <code>host verify --projection {{.Projection}}</code> lists every row, and <code>--repair</code> rebuilds all but orphans.</p>
{{end}}{{if .Err}}<p class="problem">The last verification of {{.Projection}} could not run: {{.Err}}</p>
{{end}}{{end}}{{end}}
<h2>Plugins</h2>
{{if .Plugins}}<table id="plugins"><tr><th>Projection</th><th>Plugin serving</th></tr>
{{range .Plugins}}<tr><td>{{.Projection}}</td><td>{{.Version}}</td></tr>
{{end}}</table>{{else}}<p class="none">No projection.</p>{{end}}
{{template "ops" .}}
{{if .Status.Swaps}}<h2>Hot swaps</h2>
<table id="swaps"><tr><th>Time</th><th>Projection</th><th>Result</th><th>Plugin</th><th>Origin</th><th>Step</th><th>Reason</th></tr>
{{range .Status.Swaps}}<tr{{if eq .Result "refused" "fallback"}} class="refused"{{end}}><td>{{ts .Time}}</td><td>{{.Projection}}</td><td>{{.Result}}</td><td>{{dash .Plugin}}</td><td>{{dash .Origin}}</td><td>{{dash .Step}}</td><td>{{dash .Reason}}</td></tr>
{{end}}</table>{{if .Refused}}<p>A refused module stays where it was written and never replaces the version serving; fix it, or put the last accepted version back with <code>host plugin rollback</code>.</p>{{end}}{{end}}
<h2>Shards read by this worker</h2>
{{if .Status.Shards}}<table id="shards"><tr><th>Stream</th><th>Shard</th><th>Owner</th><th>Iterator age at the last read</th><th>Last read</th><th>Records read</th></tr>
{{range .Status.Shards}}<tr><td>{{.Stream}}</td><td>{{.Shard}}</td><td>{{owner .Owner}}</td><td>{{dur .Behind}}</td><td>{{ts .LastRead}}</td><td>{{.Records}}</td></tr>
{{end}}</table>{{else}}<p class="none">No shard read yet by this worker{{if .HasFleet}} (the fleet above shows who reads them){{end}}.</p>{{end}}
<h2>Recent failures</h2>
{{if .Status.Failures}}<table id="failures"><tr><th>Time</th><th>Projection</th><th>Stream</th><th>Shard</th><th>Record</th><th>Reason</th><th>Replayed</th></tr>
{{range .Status.Failures}}<tr><td>{{ts .Time}}</td><td>{{.Projection}}</td><td>{{.Stream}}</td><td>{{.Shard}}</td><td>{{.Identifier}}</td><td>{{.Reason}}</td><td>{{if .Replayed.IsZero}}no{{else}}replayed (seen {{ts .Replayed}}){{end}}</td></tr>
{{end}}</table>{{else}}<p class="none">No record given up.</p>{{end}}
</body></html>
`))

type pluginRow struct{ Projection, Version string }

// verifyRow is a projection's last sampled verification pass as the page
// shows it.
type verifyRow struct {
	Projection, LastPass, By, Err                                 string
	Rows, Differs, Missing, Orphan, Ahead, Pending, Errors, Drift int64
}

// verifyRows are the fleet's last passes (the lease table), or this
// worker's when the fleet cannot be read.
func verifyRows(now time.Time, fleet *sidecar.Fleet, st telemetry.Status) []verifyRow {
	var out []verifyRow
	if fleet != nil && len(fleet.Verify) > 0 {
		for _, v := range fleet.Verify {
			out = append(out, verifyRow{Projection: v.Projection, LastPass: ago(fleet.At, v.At), By: v.Worker, Rows: v.Rows, Differs: v.Differs,
				Missing: v.Missing, Orphan: v.Orphan, Ahead: v.Ahead, Pending: v.Pending, Errors: v.Errors, Drift: v.Drift()})
		}
		return out
	}
	for _, p := range st.Verify {
		c := p.Counts
		out = append(out, verifyRow{Projection: p.Projection, LastPass: ago(now, p.At), By: "this worker", Err: p.Err, Rows: int64(c.Rows),
			Differs: int64(c.Differs), Missing: int64(c.Missing), Orphan: int64(c.Orphan), Ahead: int64(c.Ahead), Pending: int64(c.Pending),
			Errors: int64(c.Errors), Drift: int64(c.Drift())})
	}
	return out
}

// fleetView is the fleet as the page shows it.
type fleetView struct {
	Stream, LeaseTable string
	LeaseDuration      time.Duration
	At                 time.Time
	Problems           []string
	Shards             []fleetShard
	Workers            []fleetWorker
}

type fleetShard struct {
	ID, State, Owner, Checkpoint, Parent, Lag, LastWrite string
	Mine                                                 bool
}

type fleetWorker struct {
	ID, Held, LastRenewal, Alive string
	Mine                         bool
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Millisecond).String() + " ago"
}

// viewOf turns the fleet into the page's rows, this worker marked. A
// shard's lag is the fleet's, as host status computes it (the age of the
// oldest record after its checkpoint; "-" when it could not be read),
// not this worker's iterator age plus the time since its last read, which
// showed a caught-up shard as the poll interval behind.
func viewOf(f sidecar.Fleet, me string) *fleetView {
	v := &fleetView{Stream: f.Stream, LeaseTable: f.LeaseTable, LeaseDuration: f.LeaseDuration, At: f.At}
	for _, p := range f.Problems() {
		v.Problems = append(v.Problems, p.Error())
	}
	for _, s := range f.Shards {
		row := fleetShard{ID: s.ID, State: s.State, Owner: s.Owner, Checkpoint: s.Checkpoint, Parent: strings.Join(s.Parents, ", "),
			LastWrite: ago(f.At, s.Heartbeat), Mine: me != "" && s.Owner == me}
		switch {
		case row.Mine:
			row.Owner += " (this worker)"
		case s.Owner == "":
			row.Owner = "none"
		}
		if s.Expired {
			row.Owner += " (lease expired)"
		}
		if s.State == sidecar.ShardUnowned && s.UnownedKnown {
			row.State += " for " + s.UnownedFor.Round(time.Second).String()
		}
		if s.LagKnown {
			row.Lag = s.Lag.Round(time.Millisecond).String()
		}
		if !s.HasLease {
			row.Checkpoint = "(no lease yet)"
		}
		v.Shards = append(v.Shards, row)
	}
	self := false
	for _, w := range f.Workers {
		alive := "no"
		if w.Alive {
			alive = "yes"
		}
		held := strings.Join(w.Shards, ", ")
		if len(w.Asking) > 0 {
			held += " (asking for " + strings.Join(w.Asking, ", ") + ")"
		}
		mine := me != "" && w.ID == me
		self = self || mine
		v.Workers = append(v.Workers, fleetWorker{ID: w.ID, Held: held, LastRenewal: ago(f.At, w.LastRenewal), Alive: alive, Mine: mine})
	}
	if !self && me != "" { // a standby holds no lease, so the table does not name it
		v.Workers = append(v.Workers, fleetWorker{ID: me, Held: "none: every readable shard is held by another worker (standby)", LastRenewal: "-", Alive: "yes", Mine: true})
		slices.SortStableFunc(v.Workers, func(a, b fleetWorker) int { return cmp.Compare(a.ID, b.ID) })
	}
	return v
}

func statusPage(w http.ResponseWriter, r *http.Request, o Options) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if o.Replayed != nil {
		if gone, err := o.Replayed(ctx, o.Metrics.Status().Failures); err == nil {
			o.Metrics.MarkReplayed(gone, time.Now())
		} else {
			o.Logger.Warn("status page: checking the quarantine for replayed records", "err", err.Error())
		}
	}
	st := o.Metrics.Status()
	var plugins []pluginRow
	for p, v := range st.Plugins {
		plugins = append(plugins, pluginRow{p, v})
	}
	slices.SortFunc(plugins, func(a, b pluginRow) int { return cmp.Compare(a.Projection, b.Projection) })
	data := struct {
		Title, Worker string
		Now           time.Time
		Status        telemetry.Status
		Plugins       []pluginRow
		HasFleet      bool
		Fleet         *fleetView
		FleetErr      string
		Refused       bool
		Verify        []verifyRow
	}{Title: o.Title, Worker: o.Worker, Now: time.Now(), Status: st, Plugins: plugins, HasFleet: o.Fleet != nil}
	var fleet *sidecar.Fleet
	if o.Fleet != nil {
		if f, err := o.Fleet(ctx); err != nil {
			data.FleetErr = err.Error()
		} else {
			data.Fleet, fleet = viewOf(f, o.Worker), &f
		}
	}
	data.Verify = verifyRows(data.Now, fleet, st)
	data.Refused = slices.ContainsFunc(st.Swaps, func(e telemetry.SwapEvent) bool { return e.Result == "refused" })
	var buf bytes.Buffer
	if err := page.Execute(&buf, data); err != nil {
		http.Error(w, "rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
