package admin

import (
	"fmt"
	"html/template"
	"time"

	"github.com/dynafold/dynafold/host"
)

// The status page's downstream-protection section: each projection's
// freshness over the last hour against its objectives, the paused
// projections, and the delivery breakers.
var _ = template.Must(page.New("ops").Funcs(template.FuncMap{
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", f*100) },
	"round": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"ts0": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	},
	"objectives": func(r host.FreshnessReport) []host.ObjectiveStatus { return r.Status() },
}).Parse(`{{with .Status}}{{if or .Freshness .Paused}}<h2>Projections</h2>
<table id="projections"><tr><th>Projection</th><th>State</th><th>Events (last hour)</th><th>Freshness against the objectives</th></tr>
{{range .Freshness}}{{$p := .Projection}}<tr><td>{{.Projection}}</td><td>{{if $.Status.IsPaused $p}}<span class="problem">paused</span>{{else}}applying{{end}}</td><td>{{.Events}}</td>
<td>{{range objectives .}}<span{{if not .Met}} class="problem"{{end}}>{{.Name}} ≤ {{.Threshold}}: {{pct .Share}} within ({{if .Met}}met{{else}}missed{{end}}, {{.Name}} was {{round .Actual}})</span><br>{{else}}<span class="none">no objective declared (p50 {{round (.Quantile 0.5)}})</span>{{end}}</td></tr>
{{end}}{{range .Paused}}{{if not ($.Status.HasFreshness .)}}<tr><td>{{.}}</td><td><span class="problem">paused</span></td><td>-</td><td>-</td></tr>
{{end}}{{end}}</table>
{{if .Paused}}<p>A paused projection applies none of its events; the stream instances it skips are recorded in the lease table and caught up when it resumes (<code>host resume</code>).</p>{{end}}{{end}}
{{if .Breakers}}<h2>Delivery breakers</h2>
<table id="breakers"><tr><th>Projection</th><th>Target</th><th>State</th><th>Open until</th><th>In flight</th><th>Opened</th><th>Closed</th><th>Refused</th><th>Failures</th><th>Delivered</th></tr>
{{range .Breakers}}<tr><td>{{.Projection}}</td><td>{{.Target}}</td><td{{if ne .State.String "closed"}} class="problem"{{end}}>{{.State}}</td><td>{{ts0 .OpenUntil}}</td><td>{{.InFlight}}</td><td>{{.Opened}}</td><td>{{.Closed}}</td><td>{{.Refused}}</td><td>{{.Failures}}</td><td>{{.Delivered}}</td></tr>
{{end}}</table>{{end}}
{{if .Outbox}}<h2>Outbox</h2>
<table id="outbox"><tr><th>Projection</th><th>Last sweep</th><th>Pending effects</th><th>In rows</th><th>Oldest</th><th>Delivered by the sweep</th></tr>
{{range .Outbox}}<tr><td>{{.Projection}}</td><td>{{ts0 .At}}</td><td{{if .Pending}} class="problem"{{end}}>{{.Pending}}</td><td>{{.Rows}}</td><td>{{if .Oldest}}{{round .Oldest}}{{else}}-{{end}}</td><td>{{.Delivered}}</td></tr>
{{end}}</table>
<p>Effects committed with their rows and not yet delivered, as this worker's last sweep of the outbox index found them; the sweep delivers those no live drainer holds (<code>host drain-pending</code> does it at once).</p>{{end}}{{end}}`))
