package deploy

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// kinesisTemplate is the part of template-kinesis.json these tests read
// beyond template's.
type kinesisTemplate struct {
	Conditions map[string]json.RawMessage
	Resources  map[string]struct {
		Type           string
		Condition      string
		DeletionPolicy string
		Properties     map[string]json.RawMessage
	}
}

// TestK1_KinesisTemplateSetsTheSameMappingBaseline checks the Kinesis
// variant of the SAM template against the DynamoDB stream one and the
// code: the mapping has the same failure settings, its filter is what
// `host filter-pattern --kinesis` prints, the event table streams to the
// template's Kinesis stream (keys as `host tables create` makes them, kept
// when the stack goes), and the mapping reads the stream, or its own
// consumer with enhanced fan-out.
func TestK1_KinesisTemplateSetsTheSameMappingBaseline(t *testing.T) {
	var streams, kinesis template
	readJSON(t, "template.json", &streams)
	readJSON(t, "template-kinesis.json", &kinesis)
	if kinesis.Transform != "AWS::Serverless-2016-10-31" {
		t.Errorf("Transform %q", kinesis.Transform)
	}
	fn, ok := kinesis.Resources["ProjectionFunction"]
	if !ok || fn.Type != "AWS::Serverless::Function" || fn.Properties.Handler != "bootstrap" || fn.Properties.Runtime != "provided.al2023" {
		t.Fatalf("no ProjectionFunction like template.json's: %+v", fn)
	}
	ev, ok := fn.Properties.Events["ChangeStream"]
	if !ok || ev.Type != "Kinesis" {
		t.Fatalf("no Kinesis event source: %+v", fn.Properties.Events)
	}
	base := streams.Resources["ProjectionFunction"].Properties.Events["EventTableStream"].Properties
	for k, v := range base {
		if k == "Stream" || k == "FilterCriteria" {
			continue
		}
		if got := compact(t, ev.Properties[k]); got != compact(t, v) {
			t.Errorf("%s = %s, template.json has %s", k, got, v)
		}
	}
	for _, k := range []string{"BisectBatchOnFunctionError", "FunctionResponseTypes", "MaximumRetryAttempts", "MaximumRecordAgeInSeconds", "DestinationConfig"} {
		if ev.Properties[k] == nil {
			t.Errorf("the Kinesis mapping has no %s", k)
		}
	}
	if got, want := compact(t, ev.Properties["Stream"]),
		`{"Fn::If":["UseEnhancedFanOut",{"Fn::GetAtt":["ChangeStreamConsumer","ConsumerARN"]},{"Fn::GetAtt":["ChangeStream","Arn"]}]}`; got != want {
		t.Errorf("Stream = %s, want %s", got, want)
	}

	h, cfg := packagedHost(t)
	fc, err := h.KinesisFilterCriteria()
	if err != nil {
		t.Fatal(err)
	}
	if got := compact(t, ev.Properties["FilterCriteria"]); got != compact(t, fc) {
		t.Errorf("FilterCriteria\n  template                 %s\n  filter-pattern --kinesis %s", got, fc)
	}

	var kt kinesisTemplate
	readJSON(t, "template-kinesis.json", &kt)
	if s := kt.Resources["ChangeStream"]; s.Type != "AWS::Kinesis::Stream" {
		t.Errorf("ChangeStream is a %q", s.Type)
	}
	if c := kt.Resources["ChangeStreamConsumer"]; c.Type != "AWS::Kinesis::StreamConsumer" || c.Condition != "UseEnhancedFanOut" || kt.Conditions["UseEnhancedFanOut"] == nil {
		t.Errorf("the enhanced fan-out consumer %+v is not conditional on UseEnhancedFanOut", c)
	}
	table := kt.Resources["EventTable"]
	if table.Type != "AWS::DynamoDB::Table" || table.DeletionPolicy != "Retain" {
		t.Errorf("EventTable %s, DeletionPolicy %q: the event store is kept when the stack goes", table.Type, table.DeletionPolicy)
	}
	want := map[string]string{
		"TableName":                  `{"Ref":"EventTableName"}`,
		"KeySchema":                  `[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]`,
		"KinesisStreamSpecification": `{"ApproximateCreationDateTimePrecision":{"Ref":"CreationTimePrecision"},"StreamArn":{"Fn::GetAtt":["ChangeStream","Arn"]}}`,
	}
	for k, v := range want {
		if got := compact(t, table.Properties[k]); got != v {
			t.Errorf("EventTable %s = %s, want %s", k, got, v)
		}
	}
	if cfg.EventStore.Table != "events" {
		t.Errorf("dynafold.json's event table %q is not the template's default", cfg.EventStore.Table)
	}
}

// TestK1_KinesisTemplateGrantsLeastPrivilege: the function reads the
// Kinesis stream with exactly the actions an event source mapping needs,
// on that stream; SubscribeToShard and DescribeStreamConsumer only with
// enhanced fan-out, on the mapping's consumer; the rest as iam/lambda-kinesis.json.
func TestK1_KinesisTemplateGrantsLeastPrivilege(t *testing.T) {
	var doc struct {
		Resources map[string]struct {
			Properties struct {
				Policies []struct{ Statement []json.RawMessage }
			}
		}
	}
	readJSON(t, "template-kinesis.json", &doc)
	type statement struct {
		Sid, Effect string
		Action      []string
		Resource    json.RawMessage
	}
	var always []string
	var efo []json.RawMessage
	resources := map[string]string{}
	for _, p := range doc.Resources["ProjectionFunction"].Properties.Policies {
		for _, raw := range p.Statement {
			var cond struct {
				If []json.RawMessage `json:"Fn::If"`
			}
			if json.Unmarshal(raw, &cond) == nil && cond.If != nil {
				efo = cond.If
				continue
			}
			var s statement
			if err := json.Unmarshal(raw, &s); err != nil || s.Effect != "Allow" {
				t.Fatalf("statement %s (%v)", raw, err)
			}
			always = append(always, s.Action...)
			for _, a := range s.Action {
				resources[a] = compact(t, s.Resource)
			}
		}
	}
	sort.Strings(always)
	var file policy
	readJSON(t, "iam/lambda-kinesis.json", &file)
	if strings.Join(always, " ") != strings.Join(file.actions(), " ") {
		t.Errorf("the template's function policy %v, iam/lambda-kinesis.json %v", always, file.actions())
	}
	for _, a := range []string{"kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:ListShards"} {
		if resources[a] != `{"Fn::GetAtt":["ChangeStream","Arn"]}` {
			t.Errorf("%s on %s, want the template's stream only", a, resources[a])
		}
	}
	if resources["dynamodb:Query"] != `{"Fn::GetAtt":["EventTable","Arn"]}` {
		t.Errorf("dynamodb:Query on %s, want the event table", resources["dynamodb:Query"])
	}
	if len(efo) != 3 || compact(t, efo[0]) != `"UseEnhancedFanOut"` || compact(t, efo[2]) != `{"Ref":"AWS::NoValue"}` {
		t.Fatalf("the enhanced fan-out statement is not conditional: %s", efo)
	}
	var s statement
	if err := json.Unmarshal(efo[1], &s); err != nil {
		t.Fatal(err)
	}
	sort.Strings(s.Action)
	if strings.Join(s.Action, " ") != "kinesis:DescribeStreamConsumer kinesis:SubscribeToShard" ||
		compact(t, s.Resource) != `{"Fn::GetAtt":["ChangeStreamConsumer","ConsumerARN"]}` {
		t.Errorf("enhanced fan-out grants %v on %s, want DescribeStreamConsumer and SubscribeToShard on the consumer", s.Action, s.Resource)
	}
}
