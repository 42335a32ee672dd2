package lambdaevents_test

import (
	"encoding/base64"
	"fmt"

	"github.com/dynafold/dynafold/host/lambdaevents"
)

// A Kinesis record of a Lambda event, as a table's Kinesis streaming
// destination writes a change (creation time in milliseconds): the host
// reads it as it reads a DynamoDB stream record, named by its Kinesis
// sequence number.
func ExampleParseKinesisRecord() {
	change := `{"awsRegion":"us-east-1","eventID":"6f77","eventName":"INSERT","userIdentity":null,` +
		`"recordFormat":"application/json","tableName":"events","eventSource":"aws:dynamodb",` +
		`"dynamodb":{"ApproximateCreationDateTime":1795953600123,"Keys":{"pk":{"S":"$shop#v1#order#o-1"}},` +
		`"NewImage":{"pk":{"S":"$shop#v1#order#o-1"},"version":{"N":"1"}},"SizeBytes":60}}`
	record := `{"eventSource":"aws:kinesis","eventID":"shardId-000000000000:4965001",` +
		`"eventSourceARN":"arn:aws:kinesis:us-east-1:000000000000:stream/events-changes",` +
		`"kinesis":{"sequenceNumber":"4965001","data":"` + base64.StdEncoding.EncodeToString([]byte(change)) + `"}}`
	r, err := lambdaevents.ParseKinesisRecord([]byte(record))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.EventName, r.DynamoDB.SequenceNumber, r.DynamoDB.NewImage["version"].Str, r.DynamoDB.ApproximateCreationDateTime)
	// Output: INSERT 4965001 1 2026-11-29 12:00:00.123 +0000 UTC
}
