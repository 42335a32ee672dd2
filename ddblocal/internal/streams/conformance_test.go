package streams

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
)

func TestConformance_Streams_ViewTypesShapeRecords(t *testing.T) {
	ttl := &Identity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	cases := []struct {
		view          string
		wantNew       [3]bool // INSERT, MODIFY, REMOVE
		wantOld       [3]bool
		wantViewShape types.StreamViewType
	}{
		{ViewKeysOnly, [3]bool{}, [3]bool{}, types.StreamViewTypeKeysOnly},
		{ViewNewImage, [3]bool{true, true, false}, [3]bool{}, types.StreamViewTypeNewImage},
		{ViewOldImage, [3]bool{}, [3]bool{false, true, true}, types.StreamViewTypeOldImage},
		{ViewNewAndOldImages, [3]bool{true, true, false}, [3]bool{false, true, true}, types.StreamViewTypeNewAndOldImages},
	}
	for _, tc := range cases {
		t.Run(tc.view, func(t *testing.T) {
			r := newRegistry(t, Options{})
			c := serve(t, r)
			arn, _ := r.Enable("Orders", tc.view, []string{"pk"})
			r.Record(arn, insert("a", 1))
			r.Record(arn, modify("a", 1, 2))
			rm := remove("a", 2)
			rm.UserIdentity = ttl
			r.Record(arn, rm)

			recs := readAll(t, c, arn)
			if len(recs) != 3 {
				t.Fatalf("got %d records, want 3", len(recs))
			}
			ids := map[string]bool{}
			for i, rec := range recs {
				want := []types.OperationType{types.OperationTypeInsert, types.OperationTypeModify, types.OperationTypeRemove}[i]
				if rec.EventName != want {
					t.Errorf("record %d: eventName %s, want %s", i, rec.EventName, want)
				}
				if aws.ToString(rec.EventSource) != "aws:dynamodb" || aws.ToString(rec.EventVersion) != "1.1" || aws.ToString(rec.AwsRegion) != "us-east-1" {
					t.Errorf("record %d: source %q version %q region %q", i, aws.ToString(rec.EventSource), aws.ToString(rec.EventVersion), aws.ToString(rec.AwsRegion))
				}
				if id := aws.ToString(rec.EventID); id == "" || ids[id] {
					t.Errorf("record %d: eventID %q empty or repeated", i, id)
				} else {
					ids[id] = true
				}
				d := rec.Dynamodb
				if d.StreamViewType != tc.wantViewShape {
					t.Errorf("record %d: StreamViewType %s", i, d.StreamViewType)
				}
				if pk, ok := d.Keys["pk"].(*types.AttributeValueMemberS); !ok || pk.Value != "a" || len(d.Keys) != 1 {
					t.Errorf("record %d: Keys %#v", i, d.Keys)
				}
				if (d.NewImage != nil) != tc.wantNew[i] {
					t.Errorf("record %d: NewImage present=%v, want %v", i, d.NewImage != nil, tc.wantNew[i])
				}
				if (d.OldImage != nil) != tc.wantOld[i] {
					t.Errorf("record %d: OldImage present=%v, want %v", i, d.OldImage != nil, tc.wantOld[i])
				}
				if d.NewImage != nil {
					if v, ok := d.NewImage["v"].(*types.AttributeValueMemberN); !ok || v.Value != fmt.Sprint(i+1) {
						t.Errorf("record %d: NewImage.v %#v", i, d.NewImage["v"])
					}
				}
				if aws.ToInt64(d.SizeBytes) <= 0 {
					t.Errorf("record %d: SizeBytes %v", i, d.SizeBytes)
				}
				if d.ApproximateCreationDateTime == nil || d.ApproximateCreationDateTime.IsZero() {
					t.Errorf("record %d: no ApproximateCreationDateTime", i)
				}
			}
			if u := recs[2].UserIdentity; u == nil || aws.ToString(u.Type) != "Service" || aws.ToString(u.PrincipalId) != "dynamodb.amazonaws.com" {
				t.Errorf("TTL removal userIdentity = %#v", u)
			}
			if recs[0].UserIdentity != nil {
				t.Errorf("user write has userIdentity %#v", recs[0].UserIdentity)
			}
		})
	}
}

func TestConformance_Streams_AllValueTypesRoundTrip(t *testing.T) {
	r := newRegistry(t, Options{})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	img := abi.Item{
		"pk": abi.S("k"), "n": abi.N("12345678901234567890123456789012345678"), "b": abi.B([]byte{0, 1, 2}),
		"t": abi.Bool(true), "z": abi.Null(), "m": abi.M(map[string]abi.Value{"x": abi.S("y")}),
		"l": abi.L(abi.N("1"), abi.S("two")), "ss": abi.SS("a", "b"), "ns": abi.NS("1", "2.5"), "bs": abi.BS([]byte("p"), []byte("q")),
	}
	r.Record(arn, Change{EventName: EventInsert, Keys: key("k"), NewImage: img})
	recs := readAll(t, c, arn)
	if len(recs) != 1 {
		t.Fatalf("got %d records", len(recs))
	}
	if n := recs[0].Dynamodb.NewImage["n"].(*types.AttributeValueMemberN).Value; n != "12345678901234567890123456789012345678" {
		t.Errorf("38-digit number came back as %s", n)
	}
	if len(recs[0].Dynamodb.NewImage) != len(img) {
		t.Errorf("NewImage has %d attributes, want %d", len(recs[0].Dynamodb.NewImage), len(img))
	}
}

func TestConformance_Streams_SequenceNumbersIncreaseAndKeepItemOrder(t *testing.T) {
	r := newRegistry(t, Options{Shards: 1, ShardMaxRecords: 7})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	for v := 1; v <= 20; v++ {
		for _, id := range []string{"a", "b", "c"} {
			if v == 1 {
				r.Record(arn, insert(id, v))
			} else {
				r.Record(arn, modify(id, v-1, v))
			}
		}
	}
	recs := readAll(t, c, arn)
	if len(recs) != 60 {
		t.Fatalf("got %d records, want 60", len(recs))
	}
	digits := regexp.MustCompile(`^[0-9]{21,40}$`)
	last := ""
	lastV := map[string]int{}
	for _, rec := range recs {
		seq := aws.ToString(rec.Dynamodb.SequenceNumber)
		if !digits.MatchString(seq) {
			t.Fatalf("sequence number %q is not 21-40 digits", seq)
		}
		if seq <= last { // same length, so text order is numeric order
			t.Fatalf("sequence number %s after %s", seq, last)
		}
		last = seq
		id := rec.Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value
		var v int
		fmt.Sscan(rec.Dynamodb.NewImage["v"].(*types.AttributeValueMemberN).Value, &v)
		if v != lastV[id]+1 {
			t.Fatalf("item %s: version %d after %d", id, v, lastV[id])
		}
		lastV[id] = v
	}
}

func TestConformance_Streams_LatestVersusTrimHorizon(t *testing.T) {
	r := newRegistry(t, Options{})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("old1", 1))
	r.Record(arn, insert("old2", 1))
	sh := shards(t, c, arn)[0]
	latest, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeLatest})
	if err != nil {
		t.Fatal(err)
	}
	horizon, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: latest.ShardIterator})
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Records) != 0 || empty.NextShardIterator == nil {
		t.Fatalf("LATEST before new writes: %d records, next %v; want 0 and an iterator", len(empty.Records), empty.NextShardIterator)
	}
	r.Record(arn, insert("new", 1))
	got, _ := drain(t, c, empty.NextShardIterator)
	if len(got) != 1 || got[0].Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value != "new" {
		t.Fatalf("LATEST read %d records, want only the new one", len(got))
	}
	all, _ := drain(t, c, horizon.ShardIterator)
	if len(all) != 3 {
		t.Fatalf("TRIM_HORIZON read %d records, want 3", len(all))
	}
}

func TestConformance_Streams_AtAndAfterSequenceNumber(t *testing.T) {
	r := newRegistry(t, Options{Shards: 1, ShardMaxRecords: 5})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	for i := 0; i < 8; i++ {
		r.Record(arn, insert(fmt.Sprint("k", i), 1))
	}
	all := shards(t, c, arn)
	first := all[0]
	recs, _ := readShard(t, c, arn, *first.ShardId, types.ShardIteratorTypeTrimHorizon)
	if len(recs) != 5 {
		t.Fatalf("first shard has %d records, want 5", len(recs))
	}
	mid := recs[2].Dynamodb.SequenceNumber
	at, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: mid})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, c, at.ShardIterator)
	if len(got) != 3 || *got[0].Dynamodb.SequenceNumber != *mid {
		t.Fatalf("AT_SEQUENCE_NUMBER read %d records starting %v", len(got), got)
	}
	after, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: mid})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = drain(t, c, after.ShardIterator)
	if len(got) != 2 || *got[0].Dynamodb.SequenceNumber != *recs[3].Dynamodb.SequenceNumber {
		t.Fatalf("AFTER_SEQUENCE_NUMBER read %d records", len(got))
	}
	// The shard's own starting sequence number is a valid position.
	_, err = c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: first.SequenceNumberRange.StartingSequenceNumber})
	if err != nil {
		t.Fatalf("AT the shard's StartingSequenceNumber: %v", err)
	}
	// A sequence number of the child shard does not belong to the parent.
	child, _ := readShard(t, c, arn, *all[1].ShardId, types.ShardIteratorTypeTrimHorizon)
	_, err = c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: child[0].Dynamodb.SequenceNumber})
	if !isCode(err, "ValidationException") {
		t.Fatalf("foreign sequence number: %v, want ValidationException", err)
	}
	// Missing sequence number.
	err = call(t, r, "GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": *first.ShardId, "ShardIteratorType": "AT_SEQUENCE_NUMBER"}, nil)
	if errCode(err) != "ValidationException" {
		t.Fatalf("AT_SEQUENCE_NUMBER without SequenceNumber: %v", err)
	}
}

func TestConformance_Streams_GetRecordsLimitAndMegabyteCap(t *testing.T) {
	r := newRegistry(t, Options{Shards: 1})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	for i := 0; i < 10; i++ {
		r.Record(arn, insert(fmt.Sprint("k", i), i))
	}
	sh := shards(t, c, arn)[0]
	it, _ := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	iter := it.ShardIterator
	var pages []int
	for {
		out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(3)})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Records) == 0 {
			break
		}
		pages = append(pages, len(out.Records))
		iter = out.NextShardIterator
	}
	if fmt.Sprint(pages) != "[3 3 3 1]" {
		t.Fatalf("pages of Limit 3: %v", pages)
	}
	if _, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(0)}); !isCode(err, "ValidationException") {
		t.Fatalf("Limit 0: %v", err)
	}

	// 1 MB cap: records of ~300 KB each come back at most three at a time.
	big := strings.Repeat("x", 300<<10)
	arn2, _ := r.Enable("Big", ViewNewImage, []string{"pk"})
	for i := 0; i < 7; i++ {
		r.Record(arn2, Change{EventName: EventInsert, Keys: key(fmt.Sprint(i)), NewImage: abi.Item{"pk": abi.S(fmt.Sprint(i)), "blob": abi.S(big)}})
	}
	sh2 := shards(t, c, arn2)[0]
	it2, _ := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn2, ShardId: sh2.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	iter, total := it2.ShardIterator, 0
	for total < 7 {
		out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			t.Fatal(err)
		}
		size := int64(0)
		for _, rec := range out.Records {
			size += *rec.Dynamodb.SizeBytes
		}
		if len(out.Records) == 0 || size > 1<<20 {
			t.Fatalf("page of %d records, %d bytes", len(out.Records), size)
		}
		total += len(out.Records)
		iter = out.NextShardIterator
	}
}

func TestConformance_Streams_DescribeAndListStreams(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Shards: 1, Now: clk.Now, ShardMaxRecords: 1})
	c := serve(t, r)
	ctx := context.Background()
	arnA, label := r.Enable("Alpha", ViewNewAndOldImages, []string{"pk", "sk"})
	arnB, _ := r.Enable("Beta", ViewKeysOnly, []string{"pk"})
	arnA2, _ := r.Enable("Alpha", ViewKeysOnly, []string{"pk", "sk"})
	if arnA2 == arnA {
		t.Fatalf("re-enabling gave the same ARN %s", arnA)
	}
	if !regexp.MustCompile(`^arn:aws:dynamodb:us-east-1:000000000000:table/Alpha/stream/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$`).MatchString(arnA) || !strings.HasSuffix(arnA, "/"+label) {
		t.Fatalf("ARN %s label %s", arnA, label)
	}

	d, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arnA})
	if err != nil {
		t.Fatal(err)
	}
	sd := d.StreamDescription
	if sd.StreamStatus != types.StreamStatusEnabled || sd.StreamViewType != types.StreamViewTypeNewAndOldImages || aws.ToString(sd.TableName) != "Alpha" ||
		aws.ToString(sd.StreamLabel) != label || len(sd.KeySchema) != 2 || sd.KeySchema[1].KeyType != "RANGE" || sd.CreationRequestDateTime == nil {
		t.Fatalf("StreamDescription %+v", sd)
	}
	if len(sd.Shards) != 1 || sd.Shards[0].SequenceNumberRange.EndingSequenceNumber != nil ||
		!regexp.MustCompile(`^shardId-\d{20}-[0-9a-f]{8}$`).MatchString(*sd.Shards[0].ShardId) {
		t.Fatalf("new stream shards %+v", sd.Shards)
	}

	// Paging of shards, and the CHILD_SHARDS filter.
	for i := 0; i < 4; i++ {
		r.Record(arnB, insert(fmt.Sprint(i), 1))
	}
	all := shards(t, c, arnB)
	page, _ := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arnB, Limit: aws.Int32(2)})
	if len(all) != 4 || len(page.StreamDescription.Shards) != 2 || aws.ToString(page.StreamDescription.LastEvaluatedShardId) != *all[1].ShardId {
		t.Fatalf("%d shards; page of 2 ended at %v", len(all), page.StreamDescription.LastEvaluatedShardId)
	}
	kids, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arnB,
		ShardFilter: &types.ShardFilter{Type: types.ShardFilterTypeChildShards, ShardId: all[1].ShardId}})
	if err != nil {
		t.Fatal(err)
	}
	if ks := kids.StreamDescription.Shards; len(ks) != 1 || *ks[0].ShardId != *all[2].ShardId {
		t.Fatalf("children of %s: %+v", *all[1].ShardId, ks)
	}

	// ListStreams: all, by table, paged.
	l, err := c.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{})
	if err != nil || len(l.Streams) != 3 || l.LastEvaluatedStreamArn != nil {
		t.Fatalf("ListStreams: %v %+v", err, l)
	}
	l, _ = c.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String("Alpha")})
	if len(l.Streams) != 2 || aws.ToString(l.Streams[0].TableName) != "Alpha" {
		t.Fatalf("ListStreams(Alpha) %+v", l.Streams)
	}
	var seen []string
	var start *string
	for {
		l, err := c.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(1), ExclusiveStartStreamArn: start})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Streams {
			seen = append(seen, *s.StreamArn)
		}
		if l.LastEvaluatedStreamArn == nil {
			break
		}
		start = l.LastEvaluatedStreamArn
	}
	if len(seen) != 3 || seen[0] == seen[1] {
		t.Fatalf("paged ListStreams saw %v", seen)
	}
	_ = arnA2

	// Unknown stream.
	missing := "arn:aws:dynamodb:us-east-1:000000000000:table/None/stream/2020-01-01T00:00:00.000"
	if _, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &missing}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("DescribeStream of unknown stream: %v", err)
	}
}

func TestConformance_Streams_DisabledStreamStaysReadable(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Now: clk.Now})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("a", 1))
	r.Disable(arn)
	r.Record(arn, insert("b", 1)) // dropped
	d, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	if d.StreamDescription.StreamStatus != types.StreamStatusDisabled {
		t.Fatalf("status %s", d.StreamDescription.StreamStatus)
	}
	for _, sh := range d.StreamDescription.Shards {
		if sh.SequenceNumberRange.EndingSequenceNumber == nil {
			t.Fatalf("shard %s still open after Disable", *sh.ShardId)
		}
	}
	if recs := readAll(t, c, arn); len(recs) != 1 {
		t.Fatalf("disabled stream read %d records, want 1", len(recs))
	}
	clk.Advance(DefaultRetention + time.Minute)
	if _, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("DescribeStream after retention: %v", err)
	}
	if l, _ := c.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{}); len(l.Streams) != 0 {
		t.Fatalf("ListStreams after retention: %+v", l.Streams)
	}
}

func TestConformance_Streams_BadRequests(t *testing.T) {
	r := newRegistry(t, Options{})
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	cases := []struct {
		op   string
		body any
		code string
	}{
		{"GetRecords", map[string]any{"ShardIterator": "garbage"}, "ValidationException"},
		{"GetRecords", map[string]any{}, "ValidationException"},
		{"DescribeStream", map[string]any{}, "ValidationException"},
		{"DescribeStream", map[string]any{"StreamArn": arn, "Limit": 101}, "ValidationException"},
		{"ListStreams", map[string]any{"Limit": 0}, "ValidationException"},
		{"GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": "shardId-00000000000000000000-00000000", "ShardIteratorType": "LATEST"}, "ResourceNotFoundException"},
		{"GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": "shardId-00000000000000000000-00000000", "ShardIteratorType": "SIDEWAYS"}, "ValidationException"},
		{"PutRecord", map[string]any{}, "UnknownOperationException"},
	}
	for _, tc := range cases {
		if err := call(t, r, tc.op, tc.body, nil); errCode(err) != tc.code {
			t.Errorf("%s %v: %v, want %s", tc.op, tc.body, err, tc.code)
		}
	}
	if _, err := r.Handle(context.Background(), "ListStreams", []byte("{not json")); errCode(err) != "SerializationException" {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := r.Handle(context.Background(), "DynamoDBStreams_20120810.ListStreams", []byte("{}")); err != nil {
		t.Errorf("op with X-Amz-Target prefix: %v", err)
	}
}

func isCode(err error, code string) bool {
	var ae interface{ ErrorCode() string }
	return errors.As(err, &ae) && ae.ErrorCode() == code
}
