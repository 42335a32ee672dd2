package lambda_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/dynafold/dynafold/host/lambda"
)

// A payload that is not JSON, handed over as lambda.Start hands it: the
// answer says it is not JSON and what the source sends, and the handler
// logs the failure (aws-lambda-go's own decoding answered "invalid
// character 'h' in literal true" and nothing was logged).
func TestH6_LambdaAnswersANonJSONPayloadClearlyAndLogsIt(t *testing.T) {
	var logs bytes.Buffer
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := awslambda.NewHandler(f.call).Invoke(ctx, []byte("this is not an event"))
	if err == nil {
		t.Fatal("a payload that is not JSON was accepted")
	}
	if !errors.Is(err, lambda.ErrPayloadShape) {
		t.Errorf("err = %v, want ErrPayloadShape", err)
	}
	var pe *lambda.PayloadError // Lambda's errorType: "PayloadError", not "wrapError"
	if !errors.As(err, &pe) {
		t.Errorf("err = %T, want a *lambda.PayloadError", err)
	}
	for _, want := range []string{"the payload is not JSON", `it starts "this is not an event"`, `{"Records": [...]}`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to say %q", err, want)
		}
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), "the payload is not JSON") {
		t.Errorf("the failure is not logged as an error: %q", logs.String())
	}

	// A JSON payload still goes through the same door and is answered.
	out, err := awslambda.NewHandler(f.call).Invoke(ctx, fixture(t, "stream_event.json"))
	if err != nil {
		t.Fatalf("a stream event: %v", err)
	}
	if !bytes.Contains(out, []byte(`"batchItemFailures"`)) {
		t.Errorf("answer %s, want a partial batch response", out)
	}
}
