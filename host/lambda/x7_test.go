package lambda_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/alerts"
	"github.com/dynafold/dynafold/host/lambda"
)

// emitted is what the handler's embedded-metric-format lines declare: by
// namespace, metric name and dimension names (sorted, joined with ","),
// each line checked to carry a value of every dimension it declares.
func emitted(t *testing.T, out string) (map[string]bool, []map[string]any) {
	t.Helper()
	seen := map[string]bool{}
	var docs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &doc), line)
		docs = append(docs, doc)
		aws := doc["_aws"].(map[string]any)
		for _, d := range aws["CloudWatchMetrics"].([]any) {
			dir := d.(map[string]any)
			for _, set := range dir["Dimensions"].([]any) {
				var names []string
				for _, n := range set.([]any) {
					names = append(names, n.(string))
					require.Contains(t, doc, n.(string), "a declared dimension has its value: %s", line)
				}
				slices.Sort(names)
				for _, m := range dir["Metrics"].([]any) {
					name := m.(map[string]any)["Name"].(string)
					require.Contains(t, doc, name, "a declared metric has its value: %s", line)
					seen[dir["Namespace"].(string)+" "+name+" "+strings.Join(names, ",")] = true
				}
			}
		}
	}
	return seen, docs
}

// The alarms `host alerts --format cloudwatch` writes read only metrics the
// handler emits, with the dimensions it gives them: each objective's
// freshness per projection (a value per event applied), the iterator age
// and the failed records. Each composite alarm combines two alarms of the
// template, and each window's alarm asks for the percentile rank of the
// objective's threshold.
func TestX7_CloudWatchAlarmsReadTheMetricsTheHandlerEmits(t *testing.T) {
	var buf bytes.Buffer
	fresh := host.FreshnessConfig{"p95": host.Duration(30 * time.Second), "p99.9": host.Duration(2 * time.Minute)}
	f := newFn(t, setup{metrics: &buf, freshness: fresh})
	ev := fixture(t, "failing_row.json")
	f.seed(t, ev)
	f.mustInvoke(t, ev)
	seen, docs := emitted(t, buf.String())
	var values int
	for _, d := range docs {
		if d["Projection"] == "summaries" {
			vs, ok := d[lambda.FreshnessMetric].([]any)
			require.True(t, ok, "freshness is a list of values: %v", d)
			values += len(vs)
		}
	}
	assert.Positive(t, values, "the applied events' freshness is written")

	cfg := host.Config{Projections: []host.ProjectionConfig{{Name: "summaries", Freshness: fresh}}}
	tplJSON, err := alerts.CloudWatch(cfg.Objectives(), alerts.Options{})
	require.NoError(t, err)
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(tplJSON, &tpl))
	alarms, composites := 0, 0
	sub := regexp.MustCompile(`\$\{([A-Za-z0-9]+)\}`)
	for id, r := range tpl.Resources {
		p := r.Properties
		switch r.Type {
		case "AWS::CloudWatch::Alarm":
			if p["Namespace"] == "AWS/SQS" {
				assert.Equal(t, "ApproximateNumberOfMessagesVisible", p["MetricName"], id)
				continue
			}
			alarms++
			var dims []string
			for _, d := range p["Dimensions"].([]any) {
				dims = append(dims, d.(map[string]any)["Name"].(string))
			}
			slices.Sort(dims)
			key := p["Namespace"].(string) + " " + p["MetricName"].(string) + " " + strings.Join(dims, ",")
			assert.True(t, seen[key], "alarm %s reads %q, which the handler does not emit (it emits %v)", id, key, seen)
			if p["MetricName"] == alerts.FreshnessMetric {
				assert.Regexp(t, `^PR\(:(30000|120000)\)$`, p["ExtendedStatistic"], id)
			}
		case "AWS::CloudWatch::CompositeAlarm":
			composites++
			rule := p["AlarmRule"].(map[string]any)["Fn::Sub"].(string)
			refs := sub.FindAllStringSubmatch(rule, -1)
			require.Len(t, refs, 2, id)
			for _, m := range refs {
				assert.Equal(t, "AWS::CloudWatch::Alarm", tpl.Resources[m[1]].Type, "%s combines alarms of the template", id)
			}
		}
	}
	assert.Equal(t, 2*len(alerts.Windows)*2+2, alarms, "two windows per burn rate and objective, the iterator age and the failed records")
	assert.Equal(t, 2*len(alerts.Windows), composites)
}
