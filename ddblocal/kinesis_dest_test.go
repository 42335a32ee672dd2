package ddblocal

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// destTable creates table name keyed pk and a Kinesis stream of n shards,
// and enables the stream as the table's destination.
func destTable(t *testing.T, srv *Server, name string, n int32, precision types.ApproximateCreationDateTimePrecision) string {
	t.Helper()
	db := client(srv, 1)
	mkTable(t, db, name, false)
	arn := mkStream(t, kclient(srv), name+"-changes", n)
	in := &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String(name), StreamArn: aws.String(arn)}
	if precision != "" {
		in.EnableKinesisStreamingConfiguration = &types.EnableKinesisStreamingConfiguration{ApproximateCreationDateTimePrecision: precision}
	}
	out, err := db.EnableKinesisStreamingDestination(ctxT(t), in)
	if err != nil {
		t.Fatalf("EnableKinesisStreamingDestination: %v", err)
	}
	if out.DestinationStatus != types.DestinationStatusEnabling {
		t.Errorf("EnableKinesisStreamingDestination answered %s, want ENABLING", out.DestinationStatus)
	}
	return arn
}

// TestK3_StreamingDestinationWritesDynamoDBsKinesisRecordFormat: after
// EnableKinesisStreamingDestination, a put, an update and a delete land in
// the Kinesis stream as DynamoDB's change records: the fields AWS writes,
// in its order, both images where they exist, the creation time in epoch
// milliseconds, and a partition key derived from the item's key that
// keeps one item's records in one shard.
func TestK3_StreamingDestinationWritesDynamoDBsKinesisRecordFormat(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now})
	db := client(srv, 1)
	ctx := ctxT(t)
	destTable(t, srv, "orders", 4, "")
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]types.AttributeValue{"pk": s("o1"), "amount": n("10")}}); err != nil {
		t.Fatal(err)
	}
	clock.Add(1500 * time.Millisecond)
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("orders"), Key: map[string]types.AttributeValue{"pk": s("o1")},
		UpdateExpression: aws.String("SET amount = :t"), ExpressionAttributeValues: map[string]types.AttributeValue{":t": n("12")}}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Second)
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("orders"), Key: map[string]types.AttributeValue{"pk": s("o1")}}); err != nil {
		t.Fatal(err)
	}
	// a write that changes nothing writes no record
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("orders"), Key: map[string]types.AttributeValue{"pk": s("o1")}}); err != nil {
		t.Fatal(err)
	}
	recs, changes := streamRecords(t, kclient(srv), "orders-changes")
	if len(changes) != 3 {
		t.Fatalf("%d records, want 3 (INSERT, MODIFY, REMOVE)", len(changes))
	}
	sum := md5.Sum(append([]byte{byte(1)}, "o1"...)) // KindS, then the key's bytes
	wantPK := strings.ToUpper(hex.EncodeToString(sum[:]))
	t0 := newFakeClock().Now().UnixMilli()
	want := []struct {
		name     string
		at       int64
		old, new string
	}{{"INSERT", t0, "", `{"amount":{"N":"10"},"pk":{"S":"o1"}}`}, {"MODIFY", t0 + 1500, `{"amount":{"N":"10"},"pk":{"S":"o1"}}`, `{"amount":{"N":"12"},"pk":{"S":"o1"}}`},
		{"REMOVE", t0 + 2500, `{"amount":{"N":"12"},"pk":{"S":"o1"}}`, ""}}
	ids := map[string]bool{}
	for i, c := range changes {
		w := want[i]
		if c.EventName != w.name || c.AwsRegion != "us-east-1" || c.RecordFormat != "application/json" || c.TableName != "orders" ||
			c.EventSource != "aws:dynamodb" || string(c.UserIdentity) != "null" || c.Dynamodb.ApproximateCreationDateTime != w.at {
			t.Errorf("record %d: %+v, want %s at %d", i, c, w.name, w.at)
		}
		if ids[c.EventID] || len(c.EventID) != 36 {
			t.Errorf("record %d: eventID %q repeated or not a UUID", i, c.EventID)
		}
		ids[c.EventID] = true
		if got := js(t, c.Dynamodb.Keys); got != `{"pk":{"S":"o1"}}` {
			t.Errorf("record %d: Keys %s", i, got)
		}
		if got := js(t, c.Dynamodb.OldImage); got != orNull(w.old) {
			t.Errorf("record %d: OldImage %s, want %s", i, got, orNull(w.old))
		}
		if got := js(t, c.Dynamodb.NewImage); got != orNull(w.new) {
			t.Errorf("record %d: NewImage %s, want %s", i, got, orNull(w.new))
		}
		if c.Dynamodb.SizeBytes <= 0 {
			t.Errorf("record %d: SizeBytes %d", i, c.Dynamodb.SizeBytes)
		}
		if pk := aws.ToString(recs[i].PartitionKey); pk != wantPK {
			t.Errorf("record %d: partition key %q, want %q", i, pk, wantPK)
		}
	}
	// the record's top-level fields come in DynamoDB's order
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(recs[0].Data, &raw)
	order := []string{"awsRegion", "eventID", "eventName", "userIdentity", "recordFormat", "tableName", "dynamodb", "eventSource"}
	last := -1
	for _, k := range order {
		i := strings.Index(string(recs[0].Data), `"`+k+`":`)
		if i < last {
			t.Errorf("field %s out of DynamoDB's order in %s", k, recs[0].Data)
		}
		last = i
	}
	if len(raw) != len(order) {
		t.Errorf("record has fields %v, want exactly %v", keysOf(raw), order)
	}
}

func js(t *testing.T, v map[string]map[string]any) string {
	t.Helper()
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestK3_TTLDeletesCarryTheDynamoDBServicePrincipal: an item the TTL
// sweep deletes lands in the Kinesis stream as a REMOVE whose userIdentity
// is the DynamoDB service principal; a user's delete has none.
func TestK3_TTLDeletesCarryTheDynamoDBServicePrincipal(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now})
	db := client(srv, 1)
	ctx := ctxT(t)
	destTable(t, srv, "sessions", 1, "")
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("sessions"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	exp := fmt.Sprint(clock.Now().Add(time.Minute).Unix())
	for _, pk := range []string{"ttl", "user"} {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sessions"), Item: map[string]types.AttributeValue{"pk": s(pk), "exp": n(exp)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("sessions"), Key: map[string]types.AttributeValue{"pk": s("user")}}); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Minute)
	if n, err := srv.SweepTTL(ctx); err != nil || n != 1 {
		t.Fatalf("SweepTTL: %d, %v", n, err)
	}
	_, changes := streamRecords(t, kclient(srv), "sessions-changes")
	var got []string
	for _, c := range changes {
		got = append(got, c.EventName+" "+c.Dynamodb.Keys["pk"]["S"].(string)+" "+string(c.UserIdentity))
	}
	want := []string{"INSERT ttl null", "INSERT user null", "REMOVE user null", `REMOVE ttl {"type":"Service","principalId":"dynamodb.amazonaws.com"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestK3_PrecisionSetsCreationTimeUnits: MICROSECOND writes
// ApproximateCreationDateTime in epoch microseconds; UpdateKinesis-
// StreamingDestination changes it, and the records after follow.
func TestK3_PrecisionSetsCreationTimeUnits(t *testing.T) {
	clock := newFakeClock()
	clock.Add(123456 * time.Microsecond)
	srv := startServer(t, Options{Now: clock.Now})
	db := client(srv, 1)
	ctx := ctxT(t)
	arn := destTable(t, srv, "tbl", 1, types.ApproximateCreationDateTimePrecisionMicrosecond)
	put := func(pk string) {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tbl"), Item: map[string]types.AttributeValue{"pk": s(pk)}}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	up, err := db.UpdateKinesisStreamingDestination(ctx, &dynamodb.UpdateKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(arn),
		UpdateKinesisStreamingConfiguration: &types.UpdateKinesisStreamingConfiguration{ApproximateCreationDateTimePrecision: types.ApproximateCreationDateTimePrecisionMillisecond}})
	if err != nil || up.DestinationStatus != types.DestinationStatusUpdating {
		t.Fatalf("UpdateKinesisStreamingDestination: %v %+v", err, up)
	}
	put("b")
	_, changes := streamRecords(t, kclient(srv), "tbl-changes")
	if len(changes) != 2 {
		t.Fatalf("%d records", len(changes))
	}
	now := clock.Now()
	if got, want := changes[0].Dynamodb.ApproximateCreationDateTime, now.UnixMicro(); got != want {
		t.Errorf("MICROSECOND: ApproximateCreationDateTime %d, want %d", got, want)
	}
	if got, want := changes[1].Dynamodb.ApproximateCreationDateTime, now.UnixMilli(); got != want {
		t.Errorf("after the update to MILLISECOND: ApproximateCreationDateTime %d, want %d", got, want)
	}
	d, err := db.DescribeKinesisStreamingDestination(ctx, &dynamodb.DescribeKinesisStreamingDestinationInput{TableName: aws.String("tbl")})
	if err != nil || len(d.KinesisDataStreamDestinations) != 1 || d.KinesisDataStreamDestinations[0].ApproximateCreationDateTimePrecision != types.ApproximateCreationDateTimePrecisionMillisecond {
		t.Errorf("DescribeKinesisStreamingDestination: %v %+v", err, d)
	}
	_, err = db.UpdateKinesisStreamingDestination(ctx, &dynamodb.UpdateKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(arn),
		UpdateKinesisStreamingConfiguration: &types.UpdateKinesisStreamingConfiguration{ApproximateCreationDateTimePrecision: types.ApproximateCreationDateTimePrecisionMillisecond}})
	if code, msg := apiErr(t, err); code != "ValidationException" || msg != "Invalid Request: Precision is already set to the desired value of MILLISECOND" {
		t.Errorf("updating to the same precision: %s %q", code, msg)
	}
}

// TestK3_DestinationCallsAnswerStatusesAndRefuseWhatAWSRefuses enables,
// describes, disables and re-enables a destination, and checks the
// refusals: a second active destination, a stream that does not exist, a
// table that does not exist, disabling what is not active. Once disabled,
// writes no longer reach the stream.
func TestK3_DestinationCallsAnswerStatusesAndRefuseWhatAWSRefuses(t *testing.T) {
	srv := startServer(t, Options{})
	db := client(srv, 1)
	ctx := ctxT(t)
	arn := destTable(t, srv, "tbl", 1, "")
	other := mkStream(t, kclient(srv), "other", 1)
	_, err := db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(other)})
	if code, msg := apiErr(t, err); code != "ValidationException" || !strings.Contains(msg, "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation.") {
		t.Errorf("a second destination: %s %q", code, msg)
	}
	_, err = db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("nope"), StreamArn: aws.String(other)})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Requested resource not found: Table: nope not found" {
		t.Errorf("no such table: %s %q", code, msg)
	}
	mkTable(t, db, "uuu", false)
	_, err = db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("uuu"), StreamArn: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/missing")})
	if code, _ := apiErr(t, err); code != "ResourceNotFoundException" {
		t.Errorf("no such stream: %s", code)
	}
	_, err = db.DisableKinesisStreamingDestination(ctx, &dynamodb.DisableKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(other)})
	if code, msg := apiErr(t, err); code != "ValidationException" || !strings.Contains(msg, "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation.") {
		t.Errorf("disabling a stream that is no destination: %s %q", code, msg)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tbl"), Item: map[string]types.AttributeValue{"pk": s("before")}}); err != nil {
		t.Fatal(err)
	}
	dis, err := db.DisableKinesisStreamingDestination(ctx, &dynamodb.DisableKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(arn)})
	if err != nil || dis.DestinationStatus != types.DestinationStatusDisabling {
		t.Fatalf("DisableKinesisStreamingDestination: %v %+v", err, dis)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tbl"), Item: map[string]types.AttributeValue{"pk": s("after")}}); err != nil {
		t.Fatal(err)
	}
	d, err := db.DescribeKinesisStreamingDestination(ctx, &dynamodb.DescribeKinesisStreamingDestinationInput{TableName: aws.String("tbl")})
	if err != nil || len(d.KinesisDataStreamDestinations) != 1 || d.KinesisDataStreamDestinations[0].DestinationStatus != types.DestinationStatusDisabled {
		t.Errorf("after disabling: %v %+v", err, d)
	}
	_, changes := streamRecords(t, kclient(srv), "tbl-changes")
	if len(changes) != 1 || changes[0].Dynamodb.Keys["pk"]["S"] != "before" {
		t.Errorf("records %+v, want only the write before disabling", changes)
	}
	// re-enabled, to another stream: writes go there
	if _, err := db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("tbl"), StreamArn: aws.String(other)}); err != nil {
		t.Fatalf("enabling after disabling: %v", err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("tbl"), Item: map[string]types.AttributeValue{"pk": s("tx1")}}},
		{Put: &types.Put{TableName: aws.String("tbl"), Item: map[string]types.AttributeValue{"pk": s("tx2")}}},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"tbl": {
		{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"pk": s("tx1")}}}}}}); err != nil {
		t.Fatal(err)
	}
	_, changes = streamRecords(t, kclient(srv), "other")
	if len(changes) != 3 {
		t.Errorf("a transaction of two puts and a batch delete wrote %d records to the new destination, want 3", len(changes))
	}
	d, err = db.DescribeKinesisStreamingDestination(ctx, &dynamodb.DescribeKinesisStreamingDestinationInput{TableName: aws.String("tbl")})
	if err != nil || len(d.KinesisDataStreamDestinations) != 2 {
		t.Fatalf("Describe: %v %+v", err, d)
	}
	st := map[string]types.DestinationStatus{}
	for _, x := range d.KinesisDataStreamDestinations {
		st[aws.ToString(x.StreamArn)] = x.DestinationStatus
	}
	if st[arn] != types.DestinationStatusDisabled || st[other] != types.DestinationStatusActive {
		t.Errorf("destinations %v", st)
	}
}
