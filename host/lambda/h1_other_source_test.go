package lambda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/dynafold/dynafold/host/lambda"
)

// TestH1_LambdaRefusesRecordsOfAnotherKindOfSource: a payload whose
// records come from another kind of source (an SQS message: a function
// wired to a queue) is answered with the payload error, naming the event
// source seen and what the source sends, and logged; it was answered
// {"batchItemFailures":[]}, the messages silently dropped. A hand-made
// record with no eventSource is still read as a DynamoDB stream record.
func TestH1_LambdaRefusesRecordsOfAnotherKindOfSource(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := fixture(t, "stream_event.json")
	var ev struct{ Records []map[string]any }
	if err := json.Unmarshal(stream, &ev); err != nil {
		t.Fatal(err)
	}
	sqs := map[string]any{"eventSource": "aws:sqs", "body": "x", "messageId": "m-1"}
	mixed, err := json.Marshal(map[string]any{"Records": append(ev.Records[:1:1], sqs)})
	if err != nil {
		t.Fatal(err)
	}
	for payload, want := range map[string]string{
		`{"Records":[{"eventSource":"aws:sqs","body":"x"}]}`: `record 0 comes from "aws:sqs"`,
		string(mixed): `record 1 comes from "aws:sqs"`,
	} {
		_, err := awslambda.NewHandler(f.call).Invoke(ctx, []byte(payload))
		if err == nil {
			t.Fatalf("%s was accepted", payload)
		}
		var pe *lambda.PayloadError
		if !errors.Is(err, lambda.ErrPayloadShape) || !errors.As(err, &pe) {
			t.Errorf("err = %T %v, want a *lambda.PayloadError", err, err)
		}
		for _, w := range []string{want, `not from a DynamoDB stream ("aws:dynamodb") or a Kinesis stream ("aws:kinesis")`, `{"Records": [...]}`} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("err = %q, want it to say %q", err, w)
			}
		}
		if err := lambda.CheckPayload([]byte(payload), lambda.SourceLambda); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckPayload (host apply) = %v, want %q", err, want)
		}
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), `comes from \"aws:sqs\"`) {
		t.Errorf("the refusal is not logged as an error: %q", logs.String())
	}

	// Without eventSource (a hand-made test event), the records are read
	// as DynamoDB stream records and applied.
	for _, r := range ev.Records {
		delete(r, "eventSource")
	}
	bare, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	f.seed(t, stream)
	if err := lambda.CheckPayload(bare, lambda.SourceLambda); err != nil {
		t.Errorf("CheckPayload of records without eventSource: %v", err)
	}
	if ids := f.mustInvoke(t, bare); len(ids) != 0 {
		t.Errorf("failed records %v", ids)
	}
	f.wantRow(t, "o-1", summary{"shipped", "2", "19.75", "4"})
}
