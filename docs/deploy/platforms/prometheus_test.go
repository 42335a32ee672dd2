package platforms

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/template"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/alerts"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// opsSource is a host's paused projections and breakers, as the metrics
// read them.
type opsSource struct{}

func (opsSource) Projections() []string  { return []string{"ledger"} }
func (opsSource) IsPaused(p string) bool { return true }
func (opsSource) Breakers() []host.BreakerStatus {
	return []host.BreakerStatus{{Projection: "ledger", Target: "webhook http://127.0.0.1/x", BreakerStats: deliver.BreakerStats{State: deliver.BreakerOpen}}}
}

// exported runs a real batch through a host on ddblocal with the
// objectives and reports it, a shard read and a given-up record to the
// metrics of host run, and returns their exposition (text format) and,
// by metric name (histograms by their _bucket, _count and _sum series),
// the label names each carries.
func exported(t *testing.T, objs host.FreshnessConfig) (string, map[string]map[string]bool) {
	t.Helper()
	f := opstest.Start(t, "")
	cfg := *f.Cfg
	cfg.Projections = []host.ProjectionConfig{f.Cfg.Projections[0]}
	cfg.Projections[0].Freshness = objs
	h := f.NewHostFor(t, &cfg)
	m := telemetry.New(telemetry.Options{Objectives: cfg.Objectives()})
	m.ServeOps(opsSource{})
	evs, err := h.Append(context.Background(), testlogic.Stream, "a", 0, host.NewEvent{Type: "Add", Data: opstest.Add(1)})
	if err != nil {
		t.Fatal(err)
	}
	recs := f.Records(evs...)
	res, err := h.ProcessBatch(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	m.BatchProcessed("stream-arn", "shard-1", res, time.Millisecond, nil)
	m.ShardRead("stream-arn", "shard-1", 1, time.Second)
	m.RecordGivenUp("ledger", "stream-arn", "shard-1", recs[0], "a reason")
	m.Verified("ledger", host.VerifyCounts{Rows: 3, Differs: 1, Errors: 1}, time.Now(), time.Millisecond, nil)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	labels := map[string]map[string]bool{}
	for _, fam := range fams {
		if _, err := expfmt.MetricFamilyToText(&text, fam); err != nil {
			t.Fatal(err)
		}
		names := []string{fam.GetName()}
		if fam.GetType().String() == "HISTOGRAM" {
			names = []string{fam.GetName() + "_bucket", fam.GetName() + "_count", fam.GetName() + "_sum"}
		}
		for _, n := range names {
			labels[n] = map[string]bool{}
			for _, s := range fam.Metric {
				for _, l := range s.Label {
					labels[n][l.GetName()] = true
				}
			}
			if strings.HasSuffix(n, "_bucket") {
				labels[n]["le"] = true
			}
		}
	}
	return text.String(), labels
}

// TestX7_PrometheusRulesParseAndReadOnlyExportedMetrics checks the rule
// file `host alerts --format prometheus` writes with Prometheus's own rule
// parser (rulefmt: the groups, names, PromQL and annotation templates),
// then walks every expression: each selector names a metric host run
// exports, or a rule of the file records, with labels it carries, and each
// objective's bucket matcher selects the bucket the histogram exports at
// the threshold.
func TestX7_PrometheusRulesParseAndReadOnlyExportedMetrics(t *testing.T) {
	objs := host.FreshnessConfig{"p95": host.Duration(30 * time.Second), "p99": host.Duration(2 * time.Minute), "p99.9": host.Duration(1500 * time.Millisecond)}
	cfg := host.Config{Projections: []host.ProjectionConfig{{Name: "ledger", Freshness: objs}}}
	rules, err := alerts.Prometheus(cfg.Objectives(), alerts.Options{Source: "dynafold.json"})
	if err != nil {
		t.Fatal(err)
	}
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.Parse(rules, false, model.UTF8Validation, p, nil)
	if len(errs) > 0 {
		t.Fatalf("rulefmt refuses the rules: %v\n%s", errs, rules)
	}
	text, labels := exported(t, objs)
	recorded := map[string]bool{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			}
		}
	}
	bucketLE := regexp.MustCompile(`dynafold_freshness_seconds_bucket\{[^}]*le="([^"]+)"`)
	var les []string
	for _, m := range bucketLE.FindAllStringSubmatch(text, -1) {
		les = append(les, m[1])
	}
	alertsSeen, selectors := 0, 0
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alertsSeen++
			}
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("rule %s%s: %v", r.Record, r.Alert, err)
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				selectors++
				if recorded[vs.Name] {
					return nil
				}
				have, ok := labels[vs.Name]
				if !ok {
					t.Errorf("rule %s%s reads %s, which host run does not export", r.Record, r.Alert, vs.Name)
					return nil
				}
				for _, lm := range vs.LabelMatchers {
					if lm.Name == model.MetricNameLabel {
						continue
					}
					if !have[lm.Name] {
						t.Errorf("rule %s%s selects %s by label %q, which it does not carry", r.Record, r.Alert, vs.Name, lm.Name)
					}
					if lm.Name == "le" {
						matched := false
						for _, le := range les {
							matched = matched || lm.Matches(le)
						}
						if !matched {
							t.Errorf("rule %s: le matcher %s matches no exported bucket (%v)", r.Record, lm, les)
						}
					}
				}
				return nil
			})
		}
	}
	if want := 3*len(alerts.Windows) + 7; alertsSeen != want {
		t.Errorf("%d alerts, want %d (the burn rates of 3 objectives, the 5 feed alerts and the 2 of continuous verification)", alertsSeen, want)
	}
	if selectors == 0 {
		t.Fatal("no selector inspected")
	}
	for _, le := range []string{"1.5", "30", "120"} {
		found := false
		for _, l := range les {
			found = found || l == le
		}
		if !found {
			t.Errorf("the histogram exports no bucket at the threshold %s (it exports %v)", le, les)
		}
	}
}

// expandAnnotation expands an alert's annotation as Prometheus does when
// the alert fires for a series of labels and value.
func expandAnnotation(t *testing.T, text string, labels map[string]string, value float64) string {
	t.Helper()
	defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
	data := template.AlertTemplateData(labels, nil, "", promql.Sample{F: value})
	out, err := template.NewTemplateExpander(context.Background(), defs+text, "alert", data, 0, nil, nil, nil).Expand()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A record given up before any projection (an event item that does not
// decode) is counted with projection="", which Prometheus drops from the
// alert's labels: the DynafoldRecordsGivenUp description says so rather
// than "records of projection  were given up", and names the projection
// of the others.
func TestX7_GivenUpAlertReadsRightWithoutAProjection(t *testing.T) {
	cfg := host.Config{Projections: []host.ProjectionConfig{{Name: "ledger", Freshness: host.FreshnessConfig{"p95": host.Duration(30 * time.Second)}}}}
	rules, err := alerts.Prometheus(cfg.Objectives(), alerts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(rules, false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var description string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "DynafoldRecordsGivenUp" {
				description = r.Annotations["description"]
			}
		}
	}
	if description == "" {
		t.Fatal("no DynafoldRecordsGivenUp alert with a description")
	}
	none := expandAnnotation(t, description, map[string]string{}, 2)
	if strings.Contains(none, "projection  ") || !strings.Contains(none, "2 records that failed before any projection") {
		t.Errorf("without a projection the description reads %q", none)
	}
	if got := expandAnnotation(t, description, map[string]string{"projection": "ledger"}, 1); !strings.Contains(got, "1 records of projection ledger were given up") {
		t.Errorf("with a projection the description reads %q", got)
	}
}
