package lambda_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/lambda"
)

func TestH1_StreamEventFoldsRows(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
	f.wantRow(t, "o-2", summary{"placed", "1", "100", "2"})
	f.wantRow(t, "o-3", summary{"placed", "0", "0", "1"})

	// Lambda redelivers the batch (a retry after a timeout, say): every
	// event is already applied and nothing changes.
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("redelivery: batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
}

func TestH1_LateRecordsGapFillFromTheEventStore(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	raws, _, _ := records(t, ev)
	// Only o-1's last two records arrive (versions 3 and 4): versions 1 and 2
	// are read from the event table.
	if ids := f.mustInvoke(t, streamEvent(t, raws[4], raws[3])); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
	f.wantNoRow(t, "o-2")
}

func TestH1_EmptyBatchAnswersAnEmptyList(t *testing.T) {
	f := newFn(t, setup{})
	resp, err := f.invoke(t, streamEvent(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	if string(b) != `{"batchItemFailures":[]}` {
		t.Errorf("response = %s, want {\"batchItemFailures\":[]}", b)
	}
}

func TestB3_DecodeFailureReportsItsSequenceNumber(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "decode_failure.json")
	f.seed(t, ev)
	_, seq, _ := records(t, ev)
	// Record 2 is o-6's event with its version stored as a string.
	if ids := f.mustInvoke(t, ev); !equal(ids, []string{seq[2]}) {
		t.Fatalf("batchItemFailures = %v, want [%s]", ids, seq[2])
	}
	f.wantRow(t, "o-4", summary{"shipped", "1", "3", "3"})
	f.wantNoRow(t, "o-6")
}

func TestB3_FailingRowReportsItsEarliestRecord(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "failing_row.json")
	f.seed(t, ev)
	_, seq, _ := records(t, ev)
	// o-5's version 2 has a price evolve cannot read: the row fails, and its
	// earliest record in the batch (record 0, version 1) is reported so
	// Lambda retries from there. o-10 is written.
	if ids := f.mustInvoke(t, ev); !equal(ids, []string{seq[0]}) {
		t.Fatalf("batchItemFailures = %v, want [%s]", ids, seq[0])
	}
	f.wantNoRow(t, "o-5")
	f.wantRow(t, "o-10", summary{"placed", "1", "4.75", "2"})
}

func TestB2_PipeIdentifiersAreEventIDs(t *testing.T) {
	f := newFn(t, setup{source: lambda.SourcePipe})
	batchRecs := fixture(t, "pipe_batch.json")
	f.seed(t, batchRecs)
	_, _, eventID := records(t, batchRecs)
	// o-8 fails from its earliest record (2); o-9's event (4) does not decode.
	want := []string{eventID[2], eventID[4]}
	if ids := f.mustInvoke(t, batchRecs); !equal(ids, want) {
		t.Fatalf("batchItemFailures = %v, want %v (eventIDs)", ids, want)
	}
	f.wantRow(t, "o-7", summary{"shipped", "1", "2.5", "3"})
	f.wantNoRow(t, "o-8")
}

func TestB2_LambdaIdentifiersOfAPipeBatchAreSequenceNumbers(t *testing.T) {
	f := newFn(t, setup{source: lambda.SourceLambda})
	batchRecs := fixture(t, "pipe_batch.json")
	f.seed(t, batchRecs)
	raws, seq, _ := records(t, batchRecs)
	// The same records from an event source mapping are named by sequence number.
	want := []string{seq[2], seq[4]}
	if ids := f.mustInvoke(t, streamEvent(t, raws...)); !equal(ids, want) {
		t.Fatalf("batchItemFailures = %v, want %v (sequence numbers)", ids, want)
	}
}

func TestB2_PayloadOfTheOtherSourceIsRefused(t *testing.T) {
	lambdaFn := newFn(t, setup{source: lambda.SourceLambda})
	_, err := lambdaFn.invoke(t, fixture(t, "pipe_batch.json"))
	if !errors.Is(err, lambda.ErrPayloadShape) || !strings.Contains(err.Error(), "DYNAFOLD_SOURCE=pipe") {
		t.Errorf("lambda source, Pipe payload: err = %v, want ErrPayloadShape naming DYNAFOLD_SOURCE=pipe", err)
	}
	pipeFn := newFn(t, setup{source: lambda.SourcePipe})
	_, err = pipeFn.invoke(t, fixture(t, "stream_event.json"))
	if !errors.Is(err, lambda.ErrPayloadShape) || !strings.Contains(err.Error(), "DYNAFOLD_SOURCE=lambda") {
		t.Errorf("pipe source, stream event: err = %v, want ErrPayloadShape naming DYNAFOLD_SOURCE=lambda", err)
	}
	if _, err := lambda.New(nil, "kinesis"); !errors.Is(err, lambda.ErrUnknownSource) {
		t.Errorf("New(kinesis): err = %v, want ErrUnknownSource", err)
	}
}

func TestB3_FailedRecordWithoutIdentifierFailsTheInvocation(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "decode_failure.json")
	f.seed(t, ev)
	raws, _, _ := records(t, ev)
	raws[2] = withoutField(t, raws[2], "SequenceNumber")
	_, err := f.invoke(t, streamEvent(t, raws...))
	if !errors.Is(err, batch.ErrStreamRecordIdentifierMissing) {
		t.Fatalf("err = %v, want ErrStreamRecordIdentifierMissing", err)
	}

	p := newFn(t, setup{source: lambda.SourcePipe})
	pb := fixture(t, "pipe_batch.json")
	p.seed(t, pb)
	raws, _, _ = records(t, pb)
	raws[4] = withoutField(t, raws[4], "eventID")
	b, _ := json.Marshal(raws)
	if _, err := p.invoke(t, b); !errors.Is(err, batch.ErrStreamRecordIdentifierMissing) {
		t.Fatalf("pipe: err = %v, want ErrStreamRecordIdentifierMissing", err)
	}
}

func TestB4_UnreadableRecordFailsAlone(t *testing.T) {
	ev := fixture(t, "stream_event.json")
	raws, seq, _ := records(t, ev)
	// Record 6 (o-3's only event) carries an attribute value of no DynamoDB type.
	bad := json.RawMessage(strings.Replace(string(raws[6]), `"N": "1"`, `"Q": "1"`, 1))
	if string(bad) == string(raws[6]) {
		t.Fatal("fixture changed: no version attribute to spoil")
	}
	raws[6] = bad

	f := newFn(t, setup{})
	f.seed(t, ev)
	if ids := f.mustInvoke(t, streamEvent(t, raws...)); !equal(ids, []string{seq[6]}) {
		t.Fatalf("batchItemFailures = %v, want [%s]", ids, seq[6])
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
	f.wantNoRow(t, "o-3")

	// onDecodeFailure "skip" acknowledges it.
	s := newFn(t, setup{onDecodeFailure: "skip"})
	s.seed(t, ev)
	if ids := s.mustInvoke(t, streamEvent(t, raws...)); len(ids) != 0 {
		t.Fatalf("skip: batchItemFailures = %v, want none", ids)
	}
	s.wantRow(t, "o-2", summary{"placed", "1", "100", "2"})
	s.wantNoRow(t, "o-3")

	// A record that is not even an object has no identifier: the call fails.
	raws[6] = json.RawMessage(`"garbage"`)
	if _, err := f.invoke(t, streamEvent(t, raws...)); !errors.Is(err, batch.ErrStreamRecordIdentifierMissing) {
		t.Fatalf("garbage record: err = %v, want ErrStreamRecordIdentifierMissing", err)
	}
}

// withoutField removes every occurrence of a string field from a record.
func withoutField(t *testing.T, raw json.RawMessage, field string) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, field)
	if d, ok := m["dynamodb"].(map[string]any); ok {
		delete(d, field)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestH1_RowsStillRunningAtTheDeadlineAreReported(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	_, seq, _ := records(t, ev)
	// The invocation has less time left than the margin: nothing can run
	// (not even the plugin's key function), every record is reported, and
	// the function still answers rather than timing out.
	ctx, cancel := context.WithTimeout(context.Background(), lambda.DefaultDeadlineMargin/2)
	defer cancel()
	resp, err := f.call(ctx, ev)
	if err != nil {
		t.Fatalf("invocation failed: %v", err)
	}
	if ids := itemIDs(resp); !equal(ids, seq) {
		t.Fatalf("batchItemFailures = %v, want every record %v", ids, seq)
	}
	f.wantNoRow(t, "o-1")
}

func TestX5_TTLDeletionsAndUnreadableModifiesAreAcknowledged(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "stream_event.json")
	f.seed(t, ev)
	raws, _, _ := records(t, ev)
	ttl := json.RawMessage(`{"eventID":"ttl-1","eventName":"REMOVE","eventVersion":"1.1","eventSource":"aws:dynamodb","awsRegion":"us-east-1",
		"userIdentity":{"type":"Service","principalId":"dynamodb.amazonaws.com"},
		"dynamodb":{"ApproximateCreationDateTime":1795953600,"Keys":{"pk":{"S":"$shop#v1#order#o-1"},"sk":{"S":"$shop#v1#order.snapshot"}},
		"SequenceNumber":"200000000000000000001","SizeBytes":60,"StreamViewType":"NEW_IMAGE"}}`)
	modify := json.RawMessage(`{"eventID":"mod-1","eventName":"MODIFY","eventSource":"aws:dynamodb",
		"dynamodb":{"Keys":{"pk":{"S":"x"}},"NewImage":{"pk":{"Q":"unreadable"}},"SequenceNumber":"200000000000000000002","StreamViewType":"NEW_IMAGE"}}`)
	if ids := f.mustInvoke(t, streamEvent(t, append(raws, ttl, modify)...)); len(ids) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: a TTL deletion and a MODIFY are no events", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
}
