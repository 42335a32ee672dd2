package lambda_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dynafold/dynafold/internal/testenv"
)

// BenchmarkPayloadIntake compares what the runtime did with a payload
// before the handler ran (aws-lambda-go decoded it into a json.RawMessage,
// copying it and failing non-JSON with a bare error) with what Func.Invoke
// does instead (json.Valid, no copy, so the handler answers non-JSON
// itself), on a captured batch repeated to 100 records.
func BenchmarkPayloadIntake(b *testing.B) {
	var ev struct{ Records []json.RawMessage }
	if err := json.Unmarshal(testenv.LambdaFixture(b, "stream_event.json"), &ev); err != nil {
		b.Fatal(err)
	}
	recs := make([]json.RawMessage, 0, 100)
	for len(recs) < 100 {
		recs = append(recs, ev.Records...)
	}
	payload, err := json.Marshal(map[string]any{"Records": recs[:100]})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rawmessage", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var raw json.RawMessage
			if err := json.Unmarshal(payload, &raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("valid", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if !json.Valid(bytes.TrimSpace(payload)) {
				b.Fatal("not valid")
			}
		}
	})
}
