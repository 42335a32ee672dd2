package alerts

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/host"
)

// The CloudWatch metrics the alarms read: what host/lambda writes in the
// embedded metric format (its tests check that it does).
const (
	Namespace       = "dynafold"      // lambda.MetricsNamespace
	FreshnessMetric = "Freshness"     // lambda.FreshnessMetric, dimensions Source and Projection
	IteratorAge     = "IteratorAge"   // dimension Source
	FailedRecords   = "FailedRecords" // dimension Source
)

// CloudWatch returns a CloudFormation template (JSON) of CloudWatch alarms
// for the objectives, on the metrics the Lambda handler writes in the
// embedded metric format (namespace Namespace): for each
// objective and each of Windows, an alarm per window on the percentile
// rank of the threshold (ExtendedStatistic "PR(:threshold)": the share of
// events within it) and a composite alarm that fires when both do; and
// alarms on the iterator age and the failed records. A SAM template
// includes it as a nested application (AWS::Serverless::Application,
// Location: the file), passing the handler's Source ("lambda" or "pipe")
// and, optionally, an SNS topic for the alarm actions.
func CloudWatch(objs []host.Objective, o Options) ([]byte, error) {
	if len(objs) == 0 {
		return nil, ErrNoObjectives
	}
	res := map[string]any{}
	dims := func(projection string) []any {
		d := []any{map[string]any{"Name": "Source", "Value": map[string]any{"Ref": "Source"}}}
		if projection != "" {
			d = append(d, map[string]any{"Name": "Projection", "Value": projection})
		}
		return d
	}
	actions := map[string]any{"Fn::If": []any{"HasTopic", []any{map[string]any{"Ref": "AlarmTopicArn"}}, map[string]any{"Ref": "AWS::NoValue"}}}
	for _, ob := range objs {
		ms := ob.Threshold.Milliseconds()
		for _, w := range Windows {
			// the alarm fires when fewer than 100 - burn × budget percent
			// of the window's events were within the threshold
			within := 100 - w.Burn*ob.Budget()*100
			var ids []string
			for _, win := range []time.Duration{w.Long, w.Short} {
				id := ruleID("Freshness", ob.Projection, ob.Name, promDuration(win))
				ids = append(ids, id)
				res[id] = map[string]any{"Type": "AWS::CloudWatch::Alarm", "Properties": map[string]any{
					"AlarmDescription": fmt.Sprintf("Projection %s, objective %s within %s: fewer than %s%% of the events of the last %s were applied within the threshold (burn rate %s)",
						ob.Projection, ob.Name, ob.Threshold, number(within), promDuration(win), number(w.Burn)),
					"Namespace": Namespace, "MetricName": FreshnessMetric, "Dimensions": dims(ob.Projection),
					"ExtendedStatistic": fmt.Sprintf("PR(:%d)", ms), "Period": int(win.Seconds()), "EvaluationPeriods": 1,
					"Threshold": within, "ComparisonOperator": "LessThanThreshold", "TreatMissingData": "notBreaching",
				}}
			}
			cid := ruleID("Freshness", ob.Projection, ob.Name, "Burn", promDuration(w.Long))
			res[cid] = map[string]any{"Type": "AWS::CloudWatch::CompositeAlarm", "Properties": map[string]any{
				"AlarmName": map[string]any{"Fn::Sub": fmt.Sprintf("${AWS::StackName}-freshness-%s-%s-%s", ob.Projection, ob.Name, promDuration(w.Long))},
				"AlarmDescription": fmt.Sprintf("%s: projection %s burns its %s freshness budget (%s of events later than %s) %s times too fast over %s and %s",
					w.Severity, ob.Projection, ob.Name, number(ob.Budget()*100)+"%", ob.Threshold, number(w.Burn), promDuration(w.Long), promDuration(w.Short)),
				"AlarmRule":    map[string]any{"Fn::Sub": fmt.Sprintf(`ALARM("${%s}") AND ALARM("${%s}")`, ids[0], ids[1])},
				"AlarmActions": actions,
			}}
		}
	}
	lag := o.lag(objs)
	res["IteratorAge"] = map[string]any{"Type": "AWS::CloudWatch::Alarm", "Properties": map[string]any{
		"AlarmDescription": fmt.Sprintf("The oldest record of the batches is more than %s old: every event it carries misses the freshness objectives", lag),
		"Namespace":        Namespace, "MetricName": IteratorAge, "Dimensions": dims(""),
		"Statistic": "Maximum", "Period": 60, "EvaluationPeriods": 5, "Threshold": lag.Milliseconds(),
		"ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching", "AlarmActions": actions,
	}}
	res["FailedRecords"] = map[string]any{"Type": "AWS::CloudWatch::Alarm", "Properties": map[string]any{
		"AlarmDescription": "Records have been reported failed (batchItemFailures) in every minute of the last 15: the shard waits on them, and the event source mapping gives them up to its on-failure destination once its retries or record age run out",
		"Namespace":        Namespace, "MetricName": FailedRecords, "Dimensions": dims(""),
		"Statistic": "Sum", "Period": 60, "EvaluationPeriods": 15, "Threshold": 0,
		"ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching", "AlarmActions": actions,
	}}
	res["GivenUpRecords"] = map[string]any{"Type": "AWS::CloudWatch::Alarm", "Condition": "HasFailureQueue", "Properties": map[string]any{
		"AlarmDescription": "Records were given up to the on-failure queue: their rows lag until they are replayed",
		"Namespace":        "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
		"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Ref": "FailureQueueName"}}},
		"Statistic":  "Maximum", "Period": 300, "EvaluationPeriods": 1, "Threshold": 0,
		"ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching", "AlarmActions": actions,
	}}
	tpl := map[string]any{
		"AWSTemplateFormatVersion": "2010-09-09",
		"Description":              "CloudWatch alarms for the dynafold freshness objectives" + from(o.Source) + ", written by `host alerts --format cloudwatch`: multi-window burn-rate alarms per objective, the iterator age and the failed records.",
		"Parameters": map[string]any{
			"Source": map[string]any{"Type": "String", "Default": "lambda", "AllowedValues": []string{"lambda", "pipe"},
				"Description": "The handler's Source dimension: lambda for an event source mapping, pipe for an EventBridge Pipe."},
			"AlarmTopicArn": map[string]any{"Type": "String", "Default": "",
				"Description": "An SNS topic the composite and feed alarms notify; empty: no action."},
			"FailureQueueName": map[string]any{"Type": "String", "Default": "",
				"Description": "The event source mapping's on-failure SQS queue (its name); empty: no alarm on given-up records."},
		},
		"Conditions": map[string]any{
			"HasTopic":        map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "AlarmTopicArn"}, ""}}}},
			"HasFailureQueue": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "FailureQueueName"}, ""}}}},
		},
		"Resources": res,
	}
	b, err := json.MarshalIndent(tpl, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
