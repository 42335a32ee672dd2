package ddblocal

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// TestK3_StreamsAreCreatedDescribedListedAndDeletedByNameOrARN drives the
// stream calls through the SDK, naming the stream by name, by ARN and by
// both, with Kinesis's errors for a stream that does not exist or exists.
func TestK3_StreamsAreCreatedDescribedListedAndDeletedByNameOrARN(t *testing.T) {
	srv := startServer(t, Options{})
	kc := kclient(srv)
	ctx := ctxT(t)
	arn := mkStream(t, kc, "orders", 3)
	if want := "arn:aws:kinesis:us-east-1:000000000000:stream/orders"; arn != want {
		t.Fatalf("StreamARN %q, want %q", arn, want)
	}
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("ondemand"),
		StreamModeDetails: &ktypes.StreamModeDetails{StreamMode: ktypes.StreamModeOnDemand}}); err != nil {
		t.Fatalf("CreateStream ON_DEMAND: %v", err)
	}
	_, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("orders"), ShardCount: aws.Int32(1)})
	if code, msg := apiErr(t, err); code != "ResourceInUseException" || msg != "Stream orders under account 000000000000 already exists." {
		t.Errorf("CreateStream of an existing stream: %s %q", code, msg)
	}

	d, err := kc.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamARN: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeStream by ARN: %v", err)
	}
	sd := d.StreamDescription
	if aws.ToString(sd.StreamName) != "orders" || sd.StreamStatus != ktypes.StreamStatusActive || len(sd.Shards) != 3 ||
		aws.ToInt32(sd.RetentionPeriodHours) != 24 || aws.ToBool(sd.HasMoreShards) {
		t.Errorf("DescribeStream: name %q status %s shards %d retention %d more %v", aws.ToString(sd.StreamName), sd.StreamStatus,
			len(sd.Shards), aws.ToInt32(sd.RetentionPeriodHours), aws.ToBool(sd.HasMoreShards))
	}
	// the three shards cover every hash key once, in order
	if sd.Shards[0].HashKeyRange.StartingHashKey == nil || *sd.Shards[0].HashKeyRange.StartingHashKey != "0" ||
		*sd.Shards[2].HashKeyRange.EndingHashKey != "340282366920938463463374607431768211455" {
		t.Errorf("hash key ranges %+v .. %+v", sd.Shards[0].HashKeyRange, sd.Shards[2].HashKeyRange)
	}
	for i := 1; i < 3; i++ {
		if !seqLess(*sd.Shards[i-1].HashKeyRange.EndingHashKey, *sd.Shards[i].HashKeyRange.StartingHashKey) {
			t.Errorf("shard %d starts at %s, before its predecessor ends at %s", i, *sd.Shards[i].HashKeyRange.StartingHashKey, *sd.Shards[i-1].HashKeyRange.EndingHashKey)
		}
	}
	page, err := kc.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("orders"), Limit: aws.Int32(2)})
	if err != nil || len(page.StreamDescription.Shards) != 2 || !aws.ToBool(page.StreamDescription.HasMoreShards) {
		t.Errorf("DescribeStream Limit 2: %v, %+v", err, page)
	}
	sum, err := kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("ondemand"), StreamARN: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/ondemand")})
	if err != nil {
		t.Fatalf("DescribeStreamSummary by name and ARN: %v", err)
	}
	if s := sum.StreamDescriptionSummary; aws.ToInt32(s.OpenShardCount) != 4 || s.StreamModeDetails.StreamMode != ktypes.StreamModeOnDemand {
		t.Errorf("an on-demand stream: %d open shards, mode %s; want 4, ON_DEMAND", aws.ToInt32(s.OpenShardCount), s.StreamModeDetails.StreamMode)
	}

	ls, err := kc.ListStreams(ctx, &kinesis.ListStreamsInput{Limit: aws.Int32(1)})
	if err != nil || len(ls.StreamNames) != 1 || ls.StreamNames[0] != "ondemand" || !aws.ToBool(ls.HasMoreStreams) || ls.NextToken == nil {
		t.Fatalf("ListStreams Limit 1: %v, %+v", err, ls)
	}
	ls, err = kc.ListStreams(ctx, &kinesis.ListStreamsInput{NextToken: ls.NextToken})
	if err != nil || len(ls.StreamNames) != 1 || ls.StreamNames[0] != "orders" || aws.ToBool(ls.HasMoreStreams) {
		t.Fatalf("ListStreams page 2: %v, %+v", err, ls)
	}
	if len(ls.StreamSummaries) != 1 || aws.ToString(ls.StreamSummaries[0].StreamARN) != arn {
		t.Errorf("StreamSummaries %+v", ls.StreamSummaries)
	}

	if _, err := kc.DeleteStream(ctx, &kinesis.DeleteStreamInput{StreamARN: aws.String(arn)}); err != nil {
		t.Fatalf("DeleteStream by ARN: %v", err)
	}
	for _, in := range []*kinesis.DescribeStreamSummaryInput{{StreamName: aws.String("orders")}, {StreamARN: aws.String(arn)}} {
		_, err = kc.DescribeStreamSummary(ctx, in)
		if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Stream orders under account 000000000000 not found." {
			t.Errorf("a deleted stream: %s %q", code, msg)
		}
	}
	_, err = kc.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("ondemand"), StreamARN: aws.String(arn)})
	if code, _ := apiErr(t, err); code != "InvalidArgumentException" {
		t.Errorf("a name and an ARN of different streams: %s, want InvalidArgumentException", code)
	}
	_, err = kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("bad/name"), ShardCount: aws.Int32(0)})
	if code, msg := apiErr(t, err); code != "ValidationException" || !strings.HasPrefix(msg, "2 validation errors detected: ") ||
		!strings.Contains(msg, "Value '0' at 'shardCount' failed to satisfy constraint: Member must have value greater than or equal to 1") {
		t.Errorf("CreateStream with a bad name and count: %s %q", code, msg)
	}
}

// TestK3_RecordsGoToTheShardOfTheirHashKeyInOrder puts records with
// PutRecord and PutRecords, by partition key and by ExplicitHashKey, and
// reads them back from the shard whose hash key range holds each, with
// sequence numbers increasing within the shard.
func TestK3_RecordsGoToTheShardOfTheirHashKeyInOrder(t *testing.T) {
	srv := startServer(t, Options{})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 4)
	shards := allShards(t, kc, "s", nil)
	sent := map[string]string{} // data -> shard it was put to
	for i := 0; i < 20; i++ {
		data := fmt.Sprintf("r%d", i)
		out, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String(fmt.Sprintf("pk%d", i%7)), Data: []byte(data)})
		if err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		sent[data] = aws.ToString(out.ShardId)
	}
	// ExplicitHashKey picks the shard whatever the partition key
	last := shards[3].HashKeyRange.EndingHashKey
	out, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("any"), Data: []byte("explicit"), ExplicitHashKey: last})
	if err != nil || aws.ToString(out.ShardId) != aws.ToString(shards[3].ShardId) {
		t.Fatalf("PutRecord with the last hash key: %v, shard %s, want %s", err, aws.ToString(out.ShardId), aws.ToString(shards[3].ShardId))
	}
	sent["explicit"] = aws.ToString(out.ShardId)
	entries := []ktypes.PutRecordsRequestEntry{}
	for i := 0; i < 10; i++ {
		entries = append(entries, ktypes.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprintf("pk%d", i)), Data: []byte(fmt.Sprintf("b%d", i))})
	}
	entries = append(entries, ktypes.PutRecordsRequestEntry{PartitionKey: aws.String("x"), Data: []byte("b-first"), ExplicitHashKey: aws.String("0")})
	pr, err := kc.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: entries})
	if err != nil || aws.ToInt32(pr.FailedRecordCount) != 0 || len(pr.Records) != len(entries) {
		t.Fatalf("PutRecords: %v, %+v", err, pr)
	}
	for i, r := range pr.Records {
		sent[string(entries[i].Data)] = aws.ToString(r.ShardId)
	}
	if sent["b-first"] != aws.ToString(shards[0].ShardId) {
		t.Errorf("ExplicitHashKey 0 went to %s, want %s", sent["b-first"], aws.ToString(shards[0].ShardId))
	}
	got := 0
	for _, sh := range shards {
		recs, _ := readShard(t, kc, "s", aws.ToString(sh.ShardId))
		for i, r := range recs {
			got++
			if sent[string(r.Data)] != aws.ToString(sh.ShardId) {
				t.Errorf("record %q read from %s, put to %s", r.Data, aws.ToString(sh.ShardId), sent[string(r.Data)])
			}
			if i > 0 && !seqLess(aws.ToString(recs[i-1].SequenceNumber), aws.ToString(r.SequenceNumber)) {
				t.Errorf("%s: sequence numbers out of order: %s then %s", aws.ToString(sh.ShardId), aws.ToString(recs[i-1].SequenceNumber), aws.ToString(r.SequenceNumber))
			}
			if r.ApproximateArrivalTimestamp == nil || aws.ToString(r.PartitionKey) == "" {
				t.Errorf("record %q lacks its arrival time or partition key: %+v", r.Data, r)
			}
		}
	}
	if got != len(sent) {
		t.Errorf("read %d records, put %d", got, len(sent))
	}
	_, err = kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x"),
		ExplicitHashKey: aws.String("340282366920938463463374607431768211456")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || !strings.HasPrefix(msg, "Invalid ExplicitHashKey.") {
		t.Errorf("ExplicitHashKey 2^128: %s %q", code, msg)
	}
	_, err = kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("nope"), PartitionKey: aws.String("k"), Data: []byte("x")})
	if code, _ := apiErr(t, err); code != "ResourceNotFoundException" {
		t.Errorf("PutRecord to no stream: %s", code)
	}
}

// TestK3_EveryIteratorTypeStartsWhereKinesisDoes reads a shard from
// TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER and
// AT_TIMESTAMP, on a clock the test moves, and checks the iterator errors.
func TestK3_EveryIteratorTypeStartsWhereKinesisDoes(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 1)
	put := func(data string) string {
		out, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte(data)})
		if err != nil {
			t.Fatalf("PutRecord: %v", err)
		}
		clock.Add(time.Second)
		return aws.ToString(out.SequenceNumber)
	}
	seqs := []string{put("a"), put("b"), put("c")}
	iter := func(in kinesis.GetShardIteratorInput) []string {
		t.Helper()
		in.StreamName, in.ShardId = aws.String("s"), aws.String("shardId-000000000000")
		gi, err := kc.GetShardIterator(ctx, &in)
		if err != nil {
			t.Fatalf("GetShardIterator %s: %v", in.ShardIteratorType, err)
		}
		gr, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator})
		if err != nil {
			t.Fatalf("GetRecords: %v", err)
		}
		var data []string
		for _, r := range gr.Records {
			data = append(data, string(r.Data))
		}
		return data
	}
	latest, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeLatest})
	if err != nil {
		t.Fatal(err)
	}
	put("d")
	cases := []struct {
		in   kinesis.GetShardIteratorInput
		want string
	}{
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon}, "a b c d"},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeLatest}, ""},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String(seqs[1])}, "b c d"},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAfterSequenceNumber, StartingSequenceNumber: aws.String(seqs[1])}, "c d"},
		// the records arrived at +0s, +1s, +2s, +3s
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(newFakeClock().Now().Add(1500 * time.Millisecond))}, "c d"},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(newFakeClock().Now().Add(-time.Hour))}, "a b c d"},
	}
	for _, c := range cases {
		if got := strings.Join(iter(c.in), " "); got != c.want {
			t.Errorf("%s %s: read %q, want %q", c.in.ShardIteratorType, aws.ToString(c.in.StartingSequenceNumber), got, c.want)
		}
	}
	gr, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: latest.ShardIterator})
	if err != nil || len(gr.Records) != 1 || string(gr.Records[0].Data) != "d" {
		t.Errorf("a LATEST iterator taken before d reads %v, %+v; want d", err, gr)
	}

	bad := []struct {
		in        kinesis.GetShardIteratorInput
		code, in2 string
	}{
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtSequenceNumber}, "InvalidArgumentException",
			"Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or (2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified AT_SEQUENCE_NUMBER and no StartingSequenceNumber."},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeLatest, StartingSequenceNumber: aws.String(seqs[0])}, "InvalidArgumentException", "Request specified LATEST and also a StartingSequenceNumber."},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String("12345")}, "InvalidArgumentException", "StartingSequenceNumber 12345 used in GetShardIterator on shard shardId-000000000000 in stream s under account 000000000000 is invalid."},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp}, "InvalidArgumentException", "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter."},
		{kinesis.GetShardIteratorInput{ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(clock.Now().Add(time.Hour))}, "InvalidArgumentException", "The timestampInMillis parameter cannot be greater than the currentTimestampInMillis."},
		{kinesis.GetShardIteratorInput{ShardIteratorType: "SOMEWHERE"}, "ValidationException", "Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_TIMESTAMP, AT_SEQUENCE_NUMBER, TRIM_HORIZON]"},
	}
	for _, b := range bad {
		b.in.StreamName, b.in.ShardId = aws.String("s"), aws.String("shardId-000000000000")
		_, err := kc.GetShardIterator(ctx, &b.in)
		if code, msg := apiErr(t, err); code != b.code || !strings.Contains(msg, b.in2) {
			t.Errorf("GetShardIterator %s: %s %q, want %s containing %q", b.in.ShardIteratorType, code, msg, b.code, b.in2)
		}
	}
	_, err = kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000007"), ShardIteratorType: ktypes.ShardIteratorTypeLatest})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Shard shardId-000000000007 in stream s under account 000000000000 does not exist" {
		t.Errorf("an unknown shard: %s %q", code, msg)
	}
	_, err = kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: aws.String("bm90IGFuIGl0ZXJhdG9y")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "Invalid ShardIterator." {
		t.Errorf("a made-up iterator: %s %q", code, msg)
	}
}

// TestK3_IteratorsExpireAfterFiveMinutes: an iterator used more than five
// minutes after it was issued is refused with ExpiredIteratorException and
// Kinesis's message; a fresh one reads on.
func TestK3_IteratorsExpireAfterFiveMinutes(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 1)
	gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(5 * time.Minute)
	if _, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator}); err != nil {
		t.Fatalf("an iterator exactly five minutes old: %v", err)
	}
	clock.Add(time.Second)
	_, err = kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator})
	want := "Iterator expired. The iterator was created at time Sun Mar 01 12:00:00 UTC 2026 while right now it is Sun Mar 01 12:05:01 UTC 2026 which is further in the future than the tolerated delay of 300000 milliseconds."
	if code, msg := apiErr(t, err); code != "ExpiredIteratorException" || msg != want {
		t.Errorf("an iterator 5m1s old: %s %q, want ExpiredIteratorException %q", code, msg, want)
	}
}

// TestK3_ReadLimitRefusesASixthGetRecordsInOneSecond: with the option on,
// a shard takes five GetRecords calls a second, as Kinesis; the sixth gets
// ProvisionedThroughputExceededException, another shard is not affected,
// and the next second reads again. Off (the default), nothing is refused.
func TestK3_ReadLimitRefusesASixthGetRecordsInOneSecond(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now, Kinesis: KinesisOptions{ReadsPerShardPerSecond: 5}})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 2)
	iter := func(shard string) *string {
		gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String(shard), ShardIteratorType: ktypes.ShardIteratorTypeLatest})
		if err != nil {
			t.Fatal(err)
		}
		return gi.ShardIterator
	}
	it := iter("shardId-000000000000")
	for i := 0; i < 5; i++ {
		if _, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it})
	if code, msg := apiErr(t, err); code != "ProvisionedThroughputExceededException" || msg != "Rate exceeded for Shard - 000000000000/s/shardId-000000000000." {
		t.Errorf("a sixth call in one second: %s %q", code, msg)
	}
	if _, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iter("shardId-000000000001")}); err != nil {
		t.Errorf("another shard in the same second: %v", err)
	}
	clock.Add(time.Second)
	if _, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it}); err != nil {
		t.Errorf("the next second: %v", err)
	}

	free := startServer(t, Options{Now: clock.Now})
	fc := kclient(free)
	mkStream(t, fc, "s", 1)
	gi, err := fc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeLatest})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := fc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator}); err != nil {
			t.Fatalf("without the limit, call %d: %v", i+1, err)
		}
	}
}

// TestK3_MillisBehindLatestIsTheAgeOfTheNextUnreadRecord: a reader that
// stops short of the shard's tip learns how far behind it is; one that
// reached it reads 0.
func TestK3_MillisBehindLatestIsTheAgeOfTheNextUnreadRecord(t *testing.T) {
	clock := newFakeClock()
	srv := startServer(t, Options{Now: clock.Now})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 1)
	for _, d := range []string{"a", "b", "c"} {
		if _, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte(d)}); err != nil {
			t.Fatal(err)
		}
		clock.Add(10 * time.Second)
	}
	// a arrived 30 s ago, b 20 s, c 10 s
	gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	gr, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator, Limit: aws.Int32(1)})
	if err != nil || len(gr.Records) != 1 || aws.ToInt64(gr.MillisBehindLatest) != 20000 {
		t.Fatalf("after reading a: %v, %d records, MillisBehindLatest %d; want 20000", err, len(gr.Records), aws.ToInt64(gr.MillisBehindLatest))
	}
	gr, err = kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gr.NextShardIterator})
	if err != nil || len(gr.Records) != 2 || gr.MillisBehindLatest == nil || *gr.MillisBehindLatest != 0 {
		t.Fatalf("after reading to the tip: %v, %+v", err, gr)
	}
}
