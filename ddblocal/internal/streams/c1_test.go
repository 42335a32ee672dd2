package streams

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

func TestC1_ShardLineageParentsBeforeChildren(t *testing.T) {
	r := newRegistry(t, Options{Shards: 1, ShardMaxRecords: 3})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	for v := 1; v <= 10; v++ {
		r.Record(arn, modify("a", v-1, v))
	}
	all := shards(t, c, arn)
	if len(all) != 4 {
		t.Fatalf("10 records at 3 per shard made %d shards, want 4", len(all))
	}
	for i, sh := range all {
		rng := sh.SequenceNumberRange
		if i == 0 && sh.ParentShardId != nil {
			t.Errorf("first shard has parent %s", *sh.ParentShardId)
		}
		if i > 0 && aws.ToString(sh.ParentShardId) != *all[i-1].ShardId {
			t.Errorf("shard %d parent %v, want %s", i, sh.ParentShardId, *all[i-1].ShardId)
		}
		closed := i < len(all)-1
		if (rng.EndingSequenceNumber != nil) != closed {
			t.Errorf("shard %d closed=%v, EndingSequenceNumber %v", i, closed, rng.EndingSequenceNumber)
		}
		if closed && *rng.EndingSequenceNumber < *rng.StartingSequenceNumber {
			t.Errorf("shard %d ends before it starts: %s < %s", i, *rng.EndingSequenceNumber, *rng.StartingSequenceNumber)
		}
		if i > 0 && *rng.StartingSequenceNumber <= *all[i-1].SequenceNumberRange.EndingSequenceNumber {
			t.Errorf("child %d starts at %s, not after its parent's end", i, *rng.StartingSequenceNumber)
		}
	}

	// A closed shard read to its end gives no NextShardIterator; its records
	// lie within its range.
	first := all[0]
	it, _ := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(2)})
	if err != nil || len(out.Records) != 2 || out.NextShardIterator == nil {
		t.Fatalf("first page of closed shard: %v, %d records, next %v", err, len(out.Records), out.NextShardIterator)
	}
	out, err = c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: out.NextShardIterator})
	if err != nil || len(out.Records) != 1 || out.NextShardIterator != nil {
		t.Fatalf("end of closed shard: %v, %d records, next %v (want none)", err, len(out.Records), out.NextShardIterator)
	}
	if seq := *out.Records[0].Dynamodb.SequenceNumber; seq != *first.SequenceNumberRange.EndingSequenceNumber {
		t.Errorf("last record %s, shard ends at %s", seq, *first.SequenceNumberRange.EndingSequenceNumber)
	}
	// LATEST on a closed shard: nothing, and no iterator either.
	lt, _ := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: first.ShardId, ShardIteratorType: types.ShardIteratorTypeLatest})
	out, err = c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: lt.ShardIterator})
	if err != nil || len(out.Records) != 0 || out.NextShardIterator != nil {
		t.Fatalf("LATEST of a closed shard: %v, %d records, next %v", err, len(out.Records), out.NextShardIterator)
	}

	// Reading the lineage in order gives the item's versions in order.
	recs := readAll(t, c, arn)
	for i, rec := range recs {
		if v := rec.Dynamodb.NewImage["v"].(*types.AttributeValueMemberN).Value; v != fmt.Sprint(i+1) {
			t.Fatalf("record %d has version %s", i, v)
		}
	}
	if len(recs) != 10 {
		t.Fatalf("lineage read %d records, want 10", len(recs))
	}
	// The open shard keeps giving an iterator even with nothing to read.
	_, next := readShard(t, c, arn, *all[3].ShardId, types.ShardIteratorTypeLatest)
	if next == nil {
		t.Fatal("open shard gave no NextShardIterator")
	}
}

func TestC1_ShardRollsOverWithAge(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Shards: 1, Now: clk.Now, ShardMaxAge: time.Hour})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("a", 1))
	clk.Advance(61 * time.Minute)
	// Even with no new write, the aged shard is closed and a child opened.
	all := shards(t, c, arn)
	if len(all) != 2 || all[0].SequenceNumberRange.EndingSequenceNumber == nil || aws.ToString(all[1].ParentShardId) != *all[0].ShardId {
		t.Fatalf("after an hour: %+v", all)
	}
	r.Record(arn, insert("b", 1))
	recs := readAll(t, c, arn)
	if len(recs) != 2 {
		t.Fatalf("read %d records, want 2", len(recs))
	}
	// An open shard in an idle stream rolls over once per age, not more.
	clk.Advance(30 * time.Minute)
	if n := len(shards(t, c, arn)); n != 2 {
		t.Fatalf("%d shards after half an hour more, want 2", n)
	}
}

func TestC1_IteratorExpiresAfterFifteenMinutes(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Shards: 1, Now: clk.Now})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("a", 1))
	sh := shards(t, c, arn)[0]
	it, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(14 * time.Minute)
	out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil || len(out.Records) != 1 {
		t.Fatalf("iterator at 14 minutes: %v", err)
	}
	clk.Advance(2 * time.Minute)
	_, err = c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	var expired *types.ExpiredIteratorException
	if !asErr(err, &expired) {
		t.Fatalf("iterator at 16 minutes: %v, want ExpiredIteratorException", err)
	}
	// The NextShardIterator handed out at 14 minutes is fresh: valid until 29.
	if _, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: out.NextShardIterator}); err != nil {
		t.Fatalf("NextShardIterator issued 2 minutes ago: %v", err)
	}
	// A reader recovers by asking for a new iterator after its last sequence number.
	it2, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId,
		ShardIteratorType: types.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: out.Records[0].Dynamodb.SequenceNumber})
	if err != nil {
		t.Fatal(err)
	}
	r.Record(arn, insert("b", 1))
	got, _ := drain(t, c, it2.ShardIterator)
	if len(got) != 1 || got[0].Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value != "b" {
		t.Fatalf("resumed read got %d records", len(got))
	}
}

func TestC1_TrimmedDataAfterRetention(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Shards: 1, Now: clk.Now, ShardMaxRecords: 2, ShardMaxAge: 1000 * time.Hour})
	c := serve(t, r)
	ctx := context.Background()
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("a", 1)) // shard 0
	r.Record(arn, insert("b", 1)) // shard 0 (full)
	clk.Advance(2 * time.Hour)
	r.Record(arn, insert("c", 1)) // shard 1
	r.Record(arn, insert("d", 1)) // shard 1 (full)
	clk.Advance(2 * time.Hour)
	r.Record(arn, insert("e", 1)) // shard 2, open
	all := shards(t, c, arn)
	if len(all) != 3 {
		t.Fatalf("%d shards, want 3", len(all))
	}
	s1 := all[1]
	recs1, _ := readShard(t, c, arn, *s1.ShardId, types.ShardIteratorTypeTrimHorizon)

	// 24h after a and b were written, an iterator at c is still good, and
	// c and d are 4 minutes from expiring.
	clk.Advance(24*time.Hour - 4*time.Hour + 2*time.Hour - 4*time.Minute)
	atC, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: s1.ShardId,
		ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: recs1[0].Dynamodb.SequenceNumber})
	if err != nil {
		t.Fatal(err)
	}
	// Shard 0's records are past retention: AT its start is trimmed data.
	_, err = c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: all[0].ShardId,
		ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, SequenceNumber: all[0].SequenceNumberRange.StartingSequenceNumber})
	var trimmed *types.TrimmedDataAccessException
	if !asErr(err, &trimmed) {
		t.Fatalf("AT a trimmed sequence number: %v, want TrimmedDataAccessException", err)
	}
	// TRIM_HORIZON of the trimmed shard reads nothing and ends (it is closed).
	got, next := readShard(t, c, arn, *all[0].ShardId, types.ShardIteratorTypeTrimHorizon)
	if len(got) != 0 || next != nil {
		t.Fatalf("TRIM_HORIZON of a trimmed closed shard: %d records, next %v", len(got), next)
	}

	// The iterator taken before c was trimmed now points at trimmed data.
	clk.Advance(5 * time.Minute)
	if _, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: atC.ShardIterator}); !asErr(err, &trimmed) {
		t.Fatalf("iterator overtaken by trimming: %v, want TrimmedDataAccessException", err)
	}
	// A reader recovers with TRIM_HORIZON: the oldest surviving record is e.
	recs := readAll(t, c, arn)
	if len(recs) != 1 || recs[0].Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value != "e" {
		t.Fatalf("after trimming read %d records", len(recs))
	}

	// Closed shards whose records are all trimmed disappear once they have
	// been closed for the retention period; a child still names its parent.
	after := shards(t, c, arn)
	if len(after) != 2 || *after[0].ShardId != *all[1].ShardId || *after[1].ShardId != *all[2].ShardId {
		t.Fatalf("shards 24h after shard 0 closed: %+v", after)
	}
	if _, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: all[0].ShardId,
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("GetShardIterator of a deleted shard: %v", err)
	}
	clk.Advance(2 * time.Hour)
	after = shards(t, c, arn)
	if len(after) != 1 || *after[0].ShardId != *all[2].ShardId || aws.ToString(after[0].ParentShardId) != *all[1].ShardId {
		t.Fatalf("shards 24h after shard 1 closed: %+v", after)
	}
}

func asErr[T error](err error, target *T) bool {
	if err == nil {
		return false
	}
	return errors.As(err, target)
}

func TestC1_GetRecordsThrottledPerShard(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Now: clk.Now, GetRecordsPerShardPerSecond: 5})
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("a", 1))
	var d describeStreamOut
	if err := call(t, r, "DescribeStream", map[string]any{"StreamArn": arn}, &d); err != nil {
		t.Fatal(err)
	}
	var it getShardIteratorOut
	if err := call(t, r, "GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": d.StreamDescription.Shards[0].ShardId, "ShardIteratorType": "TRIM_HORIZON"}, &it); err != nil {
		t.Fatal(err)
	}
	get := func() error { return call(t, r, "GetRecords", map[string]any{"ShardIterator": it.ShardIterator}, nil) }
	for i := 0; i < 5; i++ {
		if err := get(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := get(); errCode(err) != "LimitExceededException" {
		t.Fatalf("6th call in a second: %v, want LimitExceededException", err)
	}
	clk.Advance(time.Second)
	if err := get(); err != nil {
		t.Fatalf("next second: %v", err)
	}
}

func TestC1_SteadyTrimmingKeepsTheRetainedWindow(t *testing.T) {
	clk := newClock()
	r := newRegistry(t, Options{Now: clk.Now, Retention: time.Hour, ShardMaxAge: 1000 * time.Hour})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	for v := 1; v <= 300; v++ {
		r.Record(arn, modify("a", v-1, v))
		if v%10 == 0 {
			_ = shards(t, c, arn) // reads trim as they go
		}
		clk.Advance(time.Minute)
	}
	// Now is 300 minutes after the first write: versions 241..300 are
	// within the hour (the 241st was written exactly 60 minutes ago).
	recs := readAll(t, c, arn)
	if len(recs) != 60 {
		t.Fatalf("retained %d records, want 60", len(recs))
	}
	for i, rec := range recs {
		if v := rec.Dynamodb.NewImage["v"].(*types.AttributeValueMemberN).Value; v != fmt.Sprint(241+i) {
			t.Fatalf("record %d is version %s, want %d", i, v, 241+i)
		}
	}
}
