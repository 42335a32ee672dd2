package deploy

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// pipeSection returns the "Through an EventBridge Pipe" section of the
// deployment README, up to the next heading of its level or above.
func pipeSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n### Through an EventBridge Pipe\n")
	if i < 0 {
		t.Fatal(`README.md has no "### Through an EventBridge Pipe" section`)
	}
	s = s[i+1:]
	for _, h := range []string{"\n## ", "\n### "} {
		if j := strings.Index(s[4:], h); j >= 0 {
			s = s[:j+4]
		}
	}
	return s
}

// TestX4_PipeSectionAndPolicyAgree checks the deployment of the function
// behind an EventBridge Pipe: the section names every action of
// iam/pipe.json (and the policy grants nothing else, on the stream, the
// function and the queue only), and the Pipe resource it shows has the
// settings its table gives, the function as target with no enrichment and
// no input template, and exactly the filter `host filter-pattern` prints.
func TestX4_PipeSectionAndPolicyAgree(t *testing.T) {
	sec := pipeSection(t)

	var p policy
	readJSON(t, "iam/pipe.json", &p)
	want := []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams",
		"lambda:InvokeFunction", "sqs:SendMessage"}
	if got := p.actions(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("iam/pipe.json grants %v, want %v", got, want)
	}
	for _, a := range p.actions() {
		if !strings.Contains(sec, "`"+a+"`") {
			t.Errorf("the Pipe section does not name %s, which iam/pipe.json grants", a)
		}
	}
	for _, s := range p.Statement {
		var res []string
		if err := json.Unmarshal(s.Resource, &res); err != nil {
			var one string
			if err := json.Unmarshal(s.Resource, &one); err != nil {
				t.Fatalf("%s: Resource %s", s.Sid, s.Resource)
			}
			res = []string{one}
		}
		for _, a := range s.Action {
			for _, r := range res {
				var ok bool
				switch {
				case a == "dynamodb:ListStreams":
					ok = r == "*"
				case strings.HasPrefix(a, "dynamodb:"):
					ok = strings.HasSuffix(r, ":table/events/stream/*")
				case a == "lambda:InvokeFunction":
					ok = strings.HasPrefix(r, "arn:aws:lambda:REGION:ACCOUNT:function:order-summaries")
				case a == "sqs:SendMessage":
					ok = r == "arn:aws:sqs:REGION:ACCOUNT:projection-failures"
				}
				if !ok {
					t.Errorf("iam/pipe.json %s grants %s on %s", s.Sid, a, r)
				}
			}
		}
	}
	for _, w := range []string{"DYNAFOLD_SOURCE=pipe", "`eventID`", "iam/pipe.json", "host filter-pattern --config dynafold.json",
		"no input\n  template", "`AUTOMATIC_BISECT`", "`REQUEST_RESPONSE`", "pipes.amazonaws.com"} {
		if !strings.Contains(sec, w) {
			t.Errorf("the Pipe section does not say %q", w)
		}
	}

	// The resource shown in the section.
	i := strings.Index(sec, "```json\n")
	j := strings.Index(sec[i+8:], "```")
	if i < 0 || j < 0 {
		t.Fatal("the Pipe section shows no JSON resource")
	}
	var res map[string]struct {
		Type       string
		Properties struct {
			RoleArn          json.RawMessage
			Source           json.RawMessage
			Enrichment       json.RawMessage
			Target           json.RawMessage
			SourceParameters struct {
				DynamoDBStreamParameters map[string]json.RawMessage
				FilterCriteria           json.RawMessage
			}
			TargetParameters map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte("{"+sec[i+8:i+8+j]+"}"), &res); err != nil {
		t.Fatalf("the Pipe section's JSON: %v", err)
	}
	pipe, ok := res["ProjectionPipe"]
	if !ok || pipe.Type != "AWS::Pipes::Pipe" {
		t.Fatalf("no AWS::Pipes::Pipe ProjectionPipe: %+v", res)
	}
	params := map[string]string{
		"StartingPosition":               `"TRIM_HORIZON"`,
		"BatchSize":                      `100`,
		"MaximumBatchingWindowInSeconds": `1`,
		"ParallelizationFactor":          `4`,
		"OnPartialBatchItemFailure":      `"AUTOMATIC_BISECT"`,
		"MaximumRetryAttempts":           `5`,
		"MaximumRecordAgeInSeconds":      `3600`,
		"DeadLetterConfig":               `{"Arn":{"Fn::GetAtt":["ProjectionFailures","Arn"]}}`,
	}
	got := pipe.Properties.SourceParameters.DynamoDBStreamParameters
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(got) != len(params) {
		t.Errorf("DynamoDBStreamParameters sets %v, want exactly %d settings", keys, len(params))
	}
	for k, v := range params {
		raw, ok := got[k]
		if !ok {
			t.Errorf("DynamoDBStreamParameters has no %s", k)
			continue
		}
		if c := compact(t, raw); c != compact(t, json.RawMessage(v)) {
			t.Errorf("DynamoDBStreamParameters.%s = %s, want %s", k, c, v)
		}
		if !strings.Contains(sec, "`DynamoDBStreamParameters."+k) {
			t.Errorf("the Pipe section's table does not explain %s", k)
		}
	}
	// The same values as the event source mapping of template.json.
	var tpl template
	readJSON(t, "template.json", &tpl)
	esm := tpl.Resources["ProjectionFunction"].Properties.Events["EventTableStream"].Properties
	for _, k := range []string{"StartingPosition", "BatchSize", "MaximumBatchingWindowInSeconds", "ParallelizationFactor", "MaximumRetryAttempts", "MaximumRecordAgeInSeconds"} {
		if compact(t, esm[k]) != compact(t, got[k]) {
			t.Errorf("%s: the Pipe %s, the event source mapping %s", k, got[k], esm[k])
		}
	}
	if pipe.Properties.Enrichment != nil {
		t.Errorf("the Pipe has an Enrichment: the function must be the target")
	}
	if c := compact(t, pipe.Properties.Target); c != `{"Fn::GetAtt":["ProjectionFunction","Arn"]}` {
		t.Errorf("Target %s, want the function", c)
	}
	if len(pipe.Properties.TargetParameters) != 1 || compact(t, pipe.Properties.TargetParameters["LambdaFunctionParameters"]) != `{"InvocationType":"REQUEST_RESPONSE"}` {
		t.Errorf("TargetParameters %v: want only LambdaFunctionParameters.InvocationType REQUEST_RESPONSE (no InputTemplate)", pipe.Properties.TargetParameters)
	}
	if pipe.Properties.RoleArn == nil || pipe.Properties.Source == nil {
		t.Errorf("the Pipe names no role or no source")
	}

	h, _ := packagedHost(t)
	fc, err := h.FilterCriteria()
	if err != nil {
		t.Fatal(err)
	}
	if c := compact(t, pipe.Properties.SourceParameters.FilterCriteria); c != compact(t, fc) {
		t.Errorf("the Pipe's FilterCriteria\n  README         %s\n  filter-pattern %s", c, fc)
	}
}
