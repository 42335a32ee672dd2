// Package deploy holds the tests of the deployment examples in this
// directory: the SAM template, the IAM policies and the packaging.
package deploy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host"
)

// template is the part of the SAM template the tests read.
type template struct {
	Transform string
	Resources map[string]struct {
		Type       string
		Properties struct {
			CodeUri  string
			Handler  string
			Runtime  string
			Policies []policy
			Events   map[string]struct {
				Type       string
				Properties map[string]json.RawMessage
			}
		}
	}
}

type policy struct {
	Statement []struct {
		Sid      string
		Effect   string
		Action   []string
		Resource json.RawMessage
	}
}

func (p policy) actions() []string {
	seen := map[string]bool{}
	for _, s := range p.Statement {
		for _, a := range s.Action {
			seen[a] = true
		}
	}
	return sorted(seen)
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestX4_TemplateSetsTheEventSourceMappingBaseline checks the function's
// event source mapping: the production baseline, a failure destination,
// and exactly the filter `host filter-pattern` prints for the example
// configuration.
func TestX4_TemplateSetsTheEventSourceMappingBaseline(t *testing.T) {
	var tpl template
	readJSON(t, "template.json", &tpl)
	if tpl.Transform != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform %q", tpl.Transform)
	}
	fn, ok := tpl.Resources["ProjectionFunction"]
	if !ok || fn.Type != "AWS::Serverless::Function" {
		t.Fatalf("no ProjectionFunction: %+v", tpl.Resources)
	}
	if p := fn.Properties; p.Handler != "bootstrap" || p.Runtime != "provided.al2023" || !strings.HasSuffix(p.CodeUri, ".zip") {
		t.Errorf("function package: %+v", p)
	}
	ev, ok := fn.Properties.Events["EventTableStream"]
	if !ok || ev.Type != "DynamoDB" {
		t.Fatalf("no DynamoDB event source: %+v", fn.Properties.Events)
	}
	want := map[string]string{
		"BatchSize":                      `100`,
		"MaximumBatchingWindowInSeconds": `1`,
		"ParallelizationFactor":          `4`,
		"BisectBatchOnFunctionError":     `true`,
		"FunctionResponseTypes":          `["ReportBatchItemFailures"]`,
		"MaximumRetryAttempts":           `5`,
		"MaximumRecordAgeInSeconds":      `3600`,
		"StartingPosition":               `"TRIM_HORIZON"`,
		"DestinationConfig":              `{"OnFailure":{"Type":"SQS","Destination":{"Fn::GetAtt":["ProjectionFailures","Arn"]}}}`,
	}
	for k, v := range want {
		if got := compact(t, ev.Properties[k]); got != compact(t, json.RawMessage(v)) {
			t.Errorf("%s = %s, want %s", k, got, v)
		}
	}
	if q := tpl.Resources["ProjectionFailures"]; q.Type != "AWS::SQS::Queue" {
		t.Errorf("the OnFailure destination is not a queue of the template: %q", q.Type)
	}

	// The filter is what `host filter-pattern --config dynafold.json` prints.
	h, _ := packagedHost(t)
	fc, err := h.FilterCriteria()
	if err != nil {
		t.Fatal(err)
	}
	if got := compact(t, ev.Properties["FilterCriteria"]); got != compact(t, fc) {
		t.Errorf("FilterCriteria\n  template       %s\n  filter-pattern %s", got, fc)
	}
}

func compact(t *testing.T, b json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v) // maps marshal sorted: key order does not matter
	return string(out)
}

// consumers lists, per IAM policy, every action it grants and where the
// code calls it: a package path prefix of the module, or "event source
// mapping" for the calls the Lambda service makes with the function's role,
// "pipe" for those an EventBridge Pipe makes with its execution role, or
// "failure runbook" for those an operator makes with the AWS CLI (or `host
// capture --from-stream`) to find the records of a batch in the mapping's
// failure queue (operations.md).
var consumers = map[string]map[string]string{
	"lambda": {
		"dynamodb:DescribeStream":   "event source mapping",
		"dynamodb:GetRecords":       "event source mapping",
		"dynamodb:GetShardIterator": "event source mapping",
		"dynamodb:ListStreams":      "event source mapping",
		"dynamodb:Query":            "host/internal/eventstore",
		"dynamodb:BatchGetItem":     "host/internal/apply",
		"dynamodb:GetItem":          "host/internal/apply",
		"dynamodb:PutItem":          "host/internal/apply",
		"sqs:SendMessage":           "event source mapping",
	},
	"lambda-kinesis": { // the Lambda function fed by a Kinesis data stream (template-kinesis.json)
		"kinesis:DescribeStream":        "event source mapping",
		"kinesis:DescribeStreamSummary": "event source mapping",
		"kinesis:GetRecords":            "event source mapping",
		"kinesis:GetShardIterator":      "event source mapping",
		"kinesis:ListShards":            "event source mapping",
		"dynamodb:Query":                "host/internal/eventstore",
		"dynamodb:BatchGetItem":         "host/internal/apply",
		"dynamodb:GetItem":              "host/internal/apply",
		"dynamodb:PutItem":              "host/internal/apply",
		"sqs:SendMessage":               "event source mapping",
	},
	"pipe": { // an EventBridge Pipe's execution role: it reads the stream and invokes the function (DYNAFOLD_SOURCE=pipe)
		"dynamodb:DescribeStream":   "pipe",
		"dynamodb:GetRecords":       "pipe",
		"dynamodb:GetShardIterator": "pipe",
		"dynamodb:ListStreams":      "pipe",
		"lambda:InvokeFunction":     "pipe",
		"sqs:SendMessage":           "pipe",
	},
	"sidecar": {
		"dynamodb:DescribeStream":   "host/internal/feed",
		"dynamodb:GetRecords":       "host/internal/feed",
		"dynamodb:GetShardIterator": "host/internal/feed",
		"dynamodb:ListStreams":      "host/internal/feed",
		"dynamodb:Query":            "host/internal/eventstore",
		"dynamodb:BatchGetItem":     "host/internal/apply",
		"dynamodb:GetItem":          "host/internal/apply",
		"dynamodb:PutItem":          "host/internal/apply",
		"dynamodb:UpdateItem":       "host/internal/lease",
		"dynamodb:DeleteItem":       "host/internal/lease",
		"dynamodb:Scan":             "host/internal/lease",
		"dynamodb:BatchWriteItem":   "host/internal/lease",
		"dynamodb:DescribeTable":    "host/internal/store/dynamo",
		// with sidecar.kinesis: the Kinesis data stream instead of the table's stream
		"kinesis:DescribeStreamSummary": "host/internal/kfeed",
		"kinesis:ListShards":            "host/internal/kfeed",
		"kinesis:GetShardIterator":      "host/internal/kfeed",
		"kinesis:GetRecords":            "host/internal/kfeed",
	},
	"drain": {
		"dynamodb:DeleteItem": "host/internal/outbox",
		"dynamodb:Query":      "host/internal/outbox",
		"dynamodb:UpdateItem": "host/internal/outbox",
		"sqs:SendMessage":     "host/deliver",
		"events:PutEvents":    "host/deliver",
	},
	"backfill": {
		"dynamodb:Scan":         "host",
		"dynamodb:Query":        "host/internal/eventstore",
		"dynamodb:BatchGetItem": "host/internal/apply",
		"dynamodb:GetItem":      "host/internal/apply",
		"dynamodb:PutItem":      "host/internal/apply",
	},
	"operator": {
		"dynamodb:CreateTable":                         "host/internal/store/dynamo",
		"dynamodb:DescribeTable":                       "host/internal/store/dynamo",
		"dynamodb:UpdateTable":                         "host/internal/store/dynamo",
		"dynamodb:ListTagsOfResource":                  "host/internal/store/dynamo",
		"dynamodb:TagResource":                         "host/internal/store/dynamo",
		"dynamodb:DescribeKinesisStreamingDestination": "host/internal/store/dynamo",
		"dynamodb:EnableKinesisStreamingDestination":   "host/internal/store/dynamo",
		"dynamodb:UpdateKinesisStreamingDestination":   "host/internal/store/dynamo",
		"kinesis:CreateStream":                         "host",
		"kinesis:DescribeStreamSummary":                "host",
		"dynamodb:ConditionCheckItem":                  "host/internal/eventstore",
		"dynamodb:PutItem":                             "host/internal/eventstore",
		"dynamodb:Query":                               "host/internal/eventstore",
		"dynamodb:Scan":                                "host",
		"dynamodb:GetItem":                             "host/internal/apply",
		"dynamodb:DescribeStream":                      "failure runbook",
		"dynamodb:GetShardIterator":                    "failure runbook",
		"dynamodb:GetRecords":                          "failure runbook",
		"sqs:ReceiveMessage":                           "failure runbook",
		"sqs:DeleteMessage":                            "failure runbook",
		"s3:GetObject":                                 "host/swap",
		"s3:GetObjectVersion":                          "host/swap",
		"s3:ListBucketVersions":                        "host/swap",
		"s3:PutObject":                                 "host/swap",
	},
}

// TestX4_IAMPoliciesCoverExactlyWhatTheCodeCalls checks each policy
// against the list above and the list against the code: every action a
// policy grants is one the code (or the event source mapping) calls, and
// every AWS operation the deployable code calls is granted by a policy.
func TestX4_IAMPoliciesCoverExactlyWhatTheCodeCalls(t *testing.T) {
	calls := codeCalls(t, "../..")
	granted := map[string]bool{}
	for name, want := range consumers {
		var p policy
		readJSON(t, filepath.Join("iam", name+".json"), &p)
		got := p.actions()
		if strings.Join(got, " ") != strings.Join(sorted(keysOf(want)), " ") {
			t.Errorf("iam/%s.json grants %v, the list of what it calls is %v", name, got, sorted(keysOf(want)))
		}
		for _, s := range p.Statement {
			if s.Effect != "Allow" || string(s.Resource) == `"*"` && !(len(s.Action) == 1 && s.Action[0] == "dynamodb:ListStreams") {
				t.Errorf("iam/%s.json %s: only ListStreams may name every resource (%s %s)", name, s.Sid, s.Effect, s.Resource)
			}
		}
		for action, where := range want {
			granted[action] = true
			if byService(where) {
				continue
			}
			if !calledIn(calls[action], where) {
				t.Errorf("iam/%s.json: %s is listed as called in %s, but the code there does not call it (called in %v)", name, action, where, calls[action])
			}
		}
	}
	for action, files := range calls {
		if !granted[action] {
			t.Errorf("the code calls %s (%v) and no policy grants it", action, files)
		}
	}
	for action := range granted {
		if calls[action] == nil && !esmOnly(action) {
			t.Errorf("%s is granted but nothing calls it", action)
		}
	}

	// The template's function has exactly the Lambda policy's actions.
	var tpl template
	readJSON(t, "template.json", &tpl)
	var fnActions []string
	for _, p := range tpl.Resources["ProjectionFunction"].Properties.Policies {
		fnActions = append(fnActions, p.actions()...)
	}
	sort.Strings(fnActions)
	if strings.Join(fnActions, " ") != strings.Join(sorted(keysOf(consumers["lambda"])), " ") {
		t.Errorf("template function policy %v, iam/lambda.json %v", fnActions, sorted(keysOf(consumers["lambda"])))
	}
}

func keysOf(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// byService reports whether the calls listed as made "where" are made with
// the consumer's role by an AWS service or the AWS CLI, not by dynafold's
// deployed code.
func byService(where string) bool {
	return where == "event source mapping" || where == "pipe" || where == "failure runbook"
}

func esmOnly(action string) bool {
	for _, c := range consumers {
		if c[action] != "" && !byService(c[action]) {
			return false
		}
	}
	return true
}

func calledIn(files []string, pkg string) bool {
	for _, f := range files {
		if dir := filepath.ToSlash(filepath.Dir(f)); dir == pkg || strings.HasPrefix(dir, pkg+"/") {
			return true
		}
	}
	return false
}

// The IAM actions an AWS SDK operation needs.
var iamOf = map[string][]string{
	"dynamodb.GetItem": {"dynamodb:GetItem"}, "dynamodb.BatchGetItem": {"dynamodb:BatchGetItem"},
	"dynamodb.PutItem": {"dynamodb:PutItem"}, "dynamodb.UpdateItem": {"dynamodb:UpdateItem"},
	"dynamodb.DeleteItem": {"dynamodb:DeleteItem"}, "dynamodb.Query": {"dynamodb:Query"}, "dynamodb.Scan": {"dynamodb:Scan"},
	"dynamodb.CreateTable": {"dynamodb:CreateTable"}, "dynamodb.DescribeTable": {"dynamodb:DescribeTable"},
	"dynamodb.UpdateTable": {"dynamodb:UpdateTable"}, "dynamodb.TransactWriteItems": {}, // its items are counted where they are built
	"dynamodbstreams.DescribeStream": {"dynamodb:DescribeStream"}, "dynamodbstreams.GetRecords": {"dynamodb:GetRecords"},
	"dynamodbstreams.GetShardIterator": {"dynamodb:GetShardIterator"}, "dynamodbstreams.ListStreams": {"dynamodb:ListStreams"},
	"sqs.SendMessage": {"sqs:SendMessage"}, "eventbridge.PutEvents": {"events:PutEvents"},
	"s3.GetObject": {"s3:GetObject", "s3:GetObjectVersion"}, "s3.PutObject": {"s3:PutObject"},
	"s3.ListObjectVersions":   {"s3:ListBucketVersions"},
	"dynamodb.BatchWriteItem": {"dynamodb:BatchWriteItem"}, "dynamodb.TagResource": {"dynamodb:TagResource"},
	"dynamodb.ListTagsOfResource":                  {"dynamodb:ListTagsOfResource"},
	"dynamodb.EnableKinesisStreamingDestination":   {"dynamodb:EnableKinesisStreamingDestination"},
	"dynamodb.DescribeKinesisStreamingDestination": {"dynamodb:DescribeKinesisStreamingDestination"},
	"dynamodb.UpdateKinesisStreamingDestination":   {"dynamodb:UpdateKinesisStreamingDestination"},
	"kinesis.CreateStream":                         {"kinesis:CreateStream"}, "kinesis.DescribeStreamSummary": {"kinesis:DescribeStreamSummary"},
	"kinesis.DescribeStream": {"kinesis:DescribeStream"}, "kinesis.ListShards": {"kinesis:ListShards"},
	"kinesis.GetShardIterator": {"kinesis:GetShardIterator"}, "kinesis.GetRecords": {"kinesis:GetRecords"},
}

// The store methods (package host/internal/store) and the actions they
// need: a transaction's items are authorized one by one.
var storeIAM = map[string][]string{
	"GetItem": {"dynamodb:GetItem"}, "BatchGetItem": {"dynamodb:BatchGetItem"}, "PutItem": {"dynamodb:PutItem"},
	"UpdateItem": {"dynamodb:UpdateItem"}, "DeleteItem": {"dynamodb:DeleteItem"}, "Query": {"dynamodb:Query"},
	"Scan": {"dynamodb:Scan"}, "EnsureTable": {"dynamodb:CreateTable", "dynamodb:DescribeTable", "dynamodb:UpdateTable"},
}

var (
	sdkCall   = regexp.MustCompile(`\b(dynamodb|dynamodbstreams|kinesis|sqs|eventbridge|s3)\.([A-Z][A-Za-z]*)Input\{`)
	storeCall = regexp.MustCompile(`\.(GetItem|BatchGetItem|PutItem|UpdateItem|DeleteItem|TransactWriteItems|Query|Scan|EnsureTable)\(ctx`)
	storeKind = regexp.MustCompile(`store\.Write\{(Put|Update|Delete|Check):`)
)

// notDeployed are the directories whose calls no deployment makes: the
// DynamoDB-compatible server, test helpers, generators, and the demo (which
// runs against an in-process server).
var notDeployed = []string{"ddblocal", "internal/testenv", "internal/dynamotest", "testdata", "docs", "cmd/host/demo", "cmd/host/replay.go"}

// codeCalls returns, per IAM action, the files of the module's non-test
// code that call it: an AWS SDK request built there, or a call of the
// store's methods (whose SDK requests are in host/internal/store/dynamo).
func codeCalls(t *testing.T, root string) map[string][]string {
	t.Helper()
	calls := map[string][]string{}
	add := func(action, file string) {
		for _, f := range calls[action] {
			if f == file {
				return
			}
		}
		calls[action] = append(calls[action], file)
	}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, skip := range notDeployed {
			if rel == skip || strings.HasPrefix(rel, skip) || strings.Contains(rel, "/"+skip+"/") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		for _, m := range sdkCall.FindAllStringSubmatch(src, -1) {
			actions, ok := iamOf[m[1]+"."+m[2]]
			if !ok {
				t.Errorf("%s calls %s.%s, which the deployment examples know nothing of: add its IAM action here and to the policy of the consumer that calls it", rel, m[1], m[2])
			}
			for _, a := range actions {
				add(a, rel)
			}
		}
		if strings.HasPrefix(rel, "host/internal/store/") {
			return nil // the store's own SDK requests were counted above
		}
		for _, m := range storeCall.FindAllStringSubmatch(src, -1) {
			if m[1] == "TransactWriteItems" {
				for _, k := range storeKind.FindAllStringSubmatch(src, -1) {
					add(map[string]string{"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem",
						"Delete": "dynamodb:DeleteItem", "Check": "dynamodb:ConditionCheckItem"}[k[1]], rel)
				}
				continue
			}
			for _, a := range storeIAM[m[1]] {
				add(a, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

// TestX4_PackagedConfigurationsLoad checks that the configurations the zip
// and the container ship are valid and read the plugin and the read-only
// cache from where `make lambda-zip` and the Dockerfile put them.
func TestX4_PackagedConfigurationsLoad(t *testing.T) {
	for _, name := range []string{"dynafold.json", "sidecar.json", "ecs/dynafold.json"} {
		cfg, err := host.LoadConfig(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Plugins.CacheDir != "cache" || !cfg.Plugins.CacheReadOnly {
			t.Errorf("%s: plugins %+v, want the read-only cache shipped in cache/", name, cfg.Plugins)
		}
		if p := cfg.Projections[0].Plugin; p != "plugins/order-summary.wasm" {
			t.Errorf("%s: plugin %q", name, p)
		}
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cp build/plugins/order-summary.wasm $(LAMBDA_DIR)/plugins/", "--cache $(LAMBDA_DIR)/cache", "GOARCH=$(ARCH)"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("Makefile's lambda-zip no longer has %q", want)
		}
	}
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/out/plugins/order-summary.wasm", "--cache /out/cache", "ARG CONFIG=docs/deploy/sidecar.json", `cp "$CONFIG" /out/dynafold.json`} {
		if !strings.Contains(string(df), want) {
			t.Errorf("Dockerfile no longer has %q", want)
		}
	}
}

// TestX6_PlatformTypesStayOutOfTheMainModule: the Kubernetes and ECS types
// the platform examples are checked against live in the nested module
// docs/deploy/platforms, so a program importing host or ddblocal pulls
// none of them.
func TestX6_PlatformTypesStayOutOfTheMainModule(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []string{"k8s.io/", "sigs.k8s.io/", "github.com/aws/aws-sdk-go-v2/service/ecs "} {
		if strings.Contains(string(b), mod) {
			t.Errorf("go.mod requires %s: the platform types belong in docs/deploy/platforms/go.mod", strings.TrimSpace(mod))
		}
	}
	if _, err := os.Stat("platforms/go.mod"); err != nil {
		t.Errorf("the platform checks are a module of their own: %v", err)
	}
}

// packagedHost is a host of the packaged configuration (dynafold.json) that
// reads only its event store, for what the configuration derives (the
// filters), and the configuration; the host is closed with the test.
func packagedHost(t *testing.T) (*host.Host, *host.Config) {
	t.Helper()
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	cfg, err := host.LoadConfig("dynafold.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.WithEventStoreOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, cfg
}
