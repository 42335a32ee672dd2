package admin

import (
	"bytes"
	"html/template"
	"net/http"
	"slices"
	"time"

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
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} status</title>
<meta http-equiv="refresh" content="10">
<style>body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left}th{background:#f3f3f3}.none{color:#777}</style></head>
<body><h1>{{.Title}} status</h1>
<p>Generated {{ts .Now}}. <a href="/metrics">Metrics</a> · <a href="/readyz">Readiness</a></p>
<h2>Plugins</h2>
{{if .Plugins}}<table id="plugins"><tr><th>Projection</th><th>Plugin serving</th></tr>
{{range .Plugins}}<tr><td>{{.Projection}}</td><td>{{.Version}}</td></tr>
{{end}}</table>{{else}}<p class="none">No projection.</p>{{end}}
<h2>Shards</h2>
{{if .Status.Shards}}<table id="shards"><tr><th>Stream</th><th>Shard</th><th>Owner</th><th>Lag</th><th>Iterator age</th><th>Last read</th><th>Records read</th></tr>
{{range .Status.Shards}}<tr><td>{{.Stream}}</td><td>{{.Shard}}</td><td>{{owner .Owner}}</td><td>{{dur .Lag}}</td><td>{{dur .Behind}}</td><td>{{ts .LastRead}}</td><td>{{.Records}}</td></tr>
{{end}}</table>{{else}}<p class="none">No shard read yet.</p>{{end}}
<h2>Recent failures</h2>
{{if .Status.Failures}}<table id="failures"><tr><th>Time</th><th>Projection</th><th>Stream</th><th>Shard</th><th>Record</th><th>Reason</th></tr>
{{range .Status.Failures}}<tr><td>{{ts .Time}}</td><td>{{.Projection}}</td><td>{{.Stream}}</td><td>{{.Shard}}</td><td>{{.Identifier}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{else}}<p class="none">No record given up.</p>{{end}}
</body></html>
`))

type pluginRow struct{ Projection, Version string }

func statusPage(w http.ResponseWriter, _ *http.Request, o Options) {
	st := o.Metrics.Status()
	var plugins []pluginRow
	for p, v := range st.Plugins {
		plugins = append(plugins, pluginRow{p, v})
	}
	slices.SortFunc(plugins, func(a, b pluginRow) int {
		if a.Projection < b.Projection {
			return -1
		}
		if a.Projection > b.Projection {
			return 1
		}
		return 0
	})
	var buf bytes.Buffer
	err := page.Execute(&buf, struct {
		Title   string
		Now     time.Time
		Status  telemetry.Status
		Plugins []pluginRow
	}{o.Title, time.Now(), st, plugins})
	if err != nil {
		http.Error(w, "rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
