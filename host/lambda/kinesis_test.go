package lambda_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/lambda"
)

var fixedClock = func() time.Time { return time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC) }

// TestK1_KinesisEventWithDuplicatesAndShuffledRecordsFoldsEveryRow feeds
// the change records of eight orders through a Kinesis data stream's
// Lambda events: a third of them twice, all in a random order, in three
// invocations. Every row ends as the same events folded in order from
// DynamoDB stream records write it, attribute for attribute.
func TestK1_KinesisEventWithDuplicatesAndShuffledRecordsFoldsEveryRow(t *testing.T) {
	f := newFn(t, setup{clock: fixedClock})
	cs := f.orderEvents(t, "k", 8, nil)
	shuffled := duplicateAndShuffle(rand.New(rand.NewPCG(25, 1)), cs)
	if len(shuffled) <= len(cs) {
		t.Fatalf("no duplicates among %d records", len(shuffled))
	}
	for first := 0; first < len(shuffled); first += 20 {
		ev, _ := kinesisEvent(t, shuffled[first:min(first+20, len(shuffled))], first+1)
		if ids := f.mustInvoke(t, ev); len(ids) != 0 {
			t.Fatalf("invocation from record %d: batchItemFailures = %v, want none", first, ids)
		}
	}

	ref := newFn(t, setup{clock: fixedClock})
	for _, c := range cs {
		ref.env.Put(t, ref.events, c.newImage)
	}
	if ids := ref.mustInvoke(t, streamRecords(t, cs)); len(ids) != 0 {
		t.Fatalf("reference fold: batchItemFailures = %v", ids)
	}
	for o := 0; o < 8; o++ {
		id := fmt.Sprint("k-", o)
		got, want := f.row(t, id), ref.row(t, id)
		if want == nil || want["status"].Str != "shipped" {
			t.Fatalf("reference row %s = %v, want a shipped order", id, want)
		}
		if !abi.ItemsEqual(got, want) {
			t.Errorf("row %s\n  from Kinesis %v\n  in order     %v", id, got, want)
		}
	}
}

// TestK1_KinesisEventFixtureFoldsLikeTheStreamEvent: the captured
// Kinesis event (stream_event.json's changes through a Kinesis data
// stream, one arriving twice and two of o-1's out of order) writes the
// rows the stream event does, and a redelivery changes nothing.
func TestK1_KinesisEventFixtureFoldsLikeTheStreamEvent(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "kinesis_event.json")
	f.seed(t, ev)
	for range 2 {
		if ids := f.mustInvoke(t, ev); len(ids) != 0 {
			t.Fatalf("batchItemFailures = %v, want none", ids)
		}
		f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
		f.wantRow(t, "o-2", summary{"placed", "1", "100", "2"})
		f.wantRow(t, "o-3", summary{"placed", "0", "0", "1"})
	}
}

// TestK1_AFailedRowReportsItsLowestSequenceNumber: two orders whose second
// event the plugin cannot fold fail, each named by the lowest Kinesis
// sequence number among its records in the batch, so Lambda retries from
// the lowest of them; the other rows are written.
func TestK1_AFailedRowReportsItsLowestSequenceNumber(t *testing.T) {
	f := newFn(t, setup{})
	cs := f.orderEvents(t, "f", 6, map[int]bool{2: true, 4: true})
	shuffled := duplicateAndShuffle(rand.New(rand.NewPCG(25, 2)), cs)
	ev, seqs := kinesisEvent(t, shuffled, 1000)
	var want []string
	for _, bad := range []string{"f-2", "f-4"} {
		lowest := ""
		for i, c := range shuffled {
			if c.newImage["streamId"].Str == bad && (lowest == "" || seqs[i] < lowest) {
				lowest = seqs[i]
			}
		}
		want = append(want, lowest)
	}
	if want[1] < want[0] {
		want[0], want[1] = want[1], want[0]
	}
	if ids := f.mustInvoke(t, ev); !equal(ids, want) {
		t.Fatalf("batchItemFailures = %v, want %v: each failed row's lowest sequence number", ids, want)
	}
	f.wantNoRow(t, "f-2")
	f.wantNoRow(t, "f-4")
	for _, id := range []string{"f-0", "f-1", "f-3", "f-5"} {
		if r := f.row(t, id); r == nil || r["status"].Str != "shipped" || r["version"].Str != "5" {
			t.Errorf("row %s = %v, want shipped at version 5", id, r)
		}
	}
}

// TestK1_TTLDeletionsInAKinesisEventAreIgnored: DynamoDB's TTL deletions
// (REMOVE by the service principal, with the expired event item as old
// image) are acknowledged and never folded, beside the events they sit
// with.
func TestK1_TTLDeletionsInAKinesisEventAreIgnored(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	cs := f.orderEvents(t, "t", 2, nil)
	var batch []change
	for _, c := range cs {
		batch = append(batch, c, change{name: "REMOVE", keys: c.keys, oldImage: c.newImage, at: c.at + 5, ttl: true})
	}
	ev, _ := kinesisEvent(t, batch, 1)
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none", ids)
	}
	for _, id := range []string{"t-0", "t-1"} {
		if r := f.row(t, id); r == nil || r["status"].Str != "shipped" || r["version"].Str != "5" {
			t.Errorf("row %s = %v, want shipped at version 5", id, r)
		}
	}
	s := summaryLine(t, &logs)
	if s["events"] != float64(10) || s["ignored"] != float64(10) || s["decodeFailures"] != float64(0) {
		t.Errorf("summary %v: want 10 events and 10 ignored TTL deletions", s)
	}
}

// TestK1_UnreadableKinesisDataIsADecodeFailure: data that is not base64,
// not JSON, or JSON that is no DynamoDB change record fails its record
// alone, named by its sequence number, with a message saying what is
// wrong; under onDecodeFailure "skip" it is acknowledged.
func TestK1_UnreadableKinesisDataIsADecodeFailure(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	cs := f.orderEvents(t, "u", 1, nil)
	_, seqs := kinesisEvent(t, cs, 1)
	var raws []json.RawMessage
	for i, c := range cs {
		raws = append(raws, kinesisRecord(t, c.json(t), seqs[i]))
	}
	notBase64 := kinesisRecord(t, nil, kinesisSeq(7))
	notBase64 = json.RawMessage(strings.Replace(string(notBase64), `"data":""`, `"data":"%%%not base64"`, 1))
	notJSON := kinesisRecord(t, []byte("OrderPlaced o-9"), kinesisSeq(8))
	notAChange := kinesisRecord(t, []byte(`{"order":{"type":"buy"}}`), kinesisSeq(9))
	raws = append(raws, notBase64, notJSON, notAChange)

	want := []string{kinesisSeq(7), kinesisSeq(8), kinesisSeq(9)}
	if ids := f.mustInvoke(t, streamEvent(t, raws...)); !equal(ids, want) {
		t.Fatalf("batchItemFailures = %v, want %v", ids, want)
	}
	if r := f.row(t, "u-0"); r == nil || r["version"].Str != "5" {
		t.Errorf("row u-0 = %v, want version 5", r)
	}
	for _, msg := range []string{"is not base64", "is not JSON", "another producer writes to this stream"} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("the log does not say %q:\n%s", msg, logs.String())
		}
	}

	s := newFn(t, setup{onDecodeFailure: "skip"})
	if ids := s.mustInvoke(t, streamEvent(t, notBase64, notJSON, notAChange)); len(ids) != 0 {
		t.Fatalf("skip: batchItemFailures = %v, want none", ids)
	}
}

// TestK1_CreationTimeInMillisecondsAndMicroseconds: a table streams its
// changes' creation times in milliseconds or in microseconds
// (ApproximateCreationDateTimePrecision); both read as the same instant,
// which the iterator age metric shows.
func TestK1_CreationTimeInMillisecondsAndMicroseconds(t *testing.T) {
	created := time.Now().Add(-time.Hour)
	for _, unit := range []struct {
		name string
		at   int64
	}{{"ms", created.UnixMilli()}, {"µs", created.UnixMicro()}} {
		var metrics bytes.Buffer
		f := newFn(t, setup{metrics: &metrics})
		cs := f.orderEvents(t, "p", 1, nil)
		for i := range cs {
			cs[i].at = unit.at + int64(i)
		}
		ev, _ := kinesisEvent(t, cs, 1)
		if ids := f.mustInvoke(t, ev); len(ids) != 0 {
			t.Fatalf("%s: batchItemFailures = %v", unit.name, ids)
		}
		var doc struct{ IteratorAge *float64 }
		if err := json.Unmarshal(metrics.Bytes(), &doc); err != nil || doc.IteratorAge == nil {
			t.Fatalf("%s: metrics %s (%v)", unit.name, metrics.String(), err)
		}
		// An hour ago, read in the wrong unit, is decades away.
		if age := time.Duration(*doc.IteratorAge) * time.Millisecond; age < time.Hour-time.Second || age > 2*time.Hour {
			t.Errorf("%s: IteratorAge %v, want an hour", unit.name, age)
		}
	}
}

// TestK1_PipeKinesisRecordsAreNamedByEventID: an EventBridge Pipe from a
// Kinesis stream sends its records as a JSON array with the Kinesis fields
// at the top; a failed one is named by its eventID.
func TestK1_PipeKinesisRecordsAreNamedByEventID(t *testing.T) {
	f := newFn(t, setup{source: lambda.SourcePipe})
	cs := f.orderEvents(t, "q", 2, map[int]bool{1: true})
	raws := make([]json.RawMessage, len(cs))
	for i, c := range cs {
		raws[i] = pipeKinesisRecord(t, c.json(t), kinesisSeq(i+1))
	}
	b, _ := json.Marshal(raws)
	if ids := f.mustInvoke(t, b); !equal(ids, []string{"shardId-000000000002:" + kinesisSeq(6)}) {
		t.Fatalf("batchItemFailures = %v, want the eventID of q-1's first record", ids)
	}
	if r := f.row(t, "q-0"); r == nil || r["version"].Str != "5" {
		t.Errorf("row q-0 = %v, want version 5", r)
	}
}

// TestK1_ARecordOfAnotherKindInAKinesisEventFailsAlone: one event source
// mapping delivers one kind of record; a DynamoDB stream record in a
// Kinesis event (or the reverse) is not guessed at, it fails with a
// message naming both kinds.
func TestK1_ARecordOfAnotherKindInAKinesisEventFailsAlone(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	cs := f.orderEvents(t, "m", 1, nil)
	ev, _ := kinesisEvent(t, cs, 1)
	var k struct{ Records []json.RawMessage }
	if err := json.Unmarshal(ev, &k); err != nil {
		t.Fatal(err)
	}
	var s struct{ Records []json.RawMessage }
	if err := json.Unmarshal(streamRecords(t, cs[:1]), &s); err != nil {
		t.Fatal(err)
	}
	var seq struct {
		DynamoDB struct{ SequenceNumber string }
	}
	_ = json.Unmarshal(s.Records[0], &seq)
	if ids := f.mustInvoke(t, streamEvent(t, append(k.Records, s.Records[0])...)); !equal(ids, []string{seq.DynamoDB.SequenceNumber}) {
		t.Fatalf("Kinesis event with a stream record: batchItemFailures = %v, want [%s]", ids, seq.DynamoDB.SequenceNumber)
	}
	if !strings.Contains(logs.String(), "aws:kinesis") || !strings.Contains(logs.String(), "aws:dynamodb") {
		t.Errorf("the log does not name both kinds:\n%s", logs.String())
	}

	// The reverse: a Kinesis record in a DynamoDB stream event.
	g := newFn(t, setup{})
	if ids := g.mustInvoke(t, streamEvent(t, s.Records[0], k.Records[1])); !equal(ids, []string{kinesisSeq(2)}) {
		t.Fatalf("stream event with a Kinesis record: batchItemFailures = %v, want [%s]", ids, kinesisSeq(2))
	}
}

// summaryLine returns the handler's last "batch" log line.
func summaryLine(t *testing.T, logs *bytes.Buffer) map[string]any {
	t.Helper()
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "batch" {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("no batch summary in the log:\n%s", logs.String())
	}
	return last
}
