package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dynafold/dynafold/host"
)

// LambdaFixture reads a captured batch from host/lambda/testdata (written by
// host/lambda/testdata/gen), whichever package's test asks.
func LambdaFixture(t testing.TB, name string) json.RawMessage {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "host", "lambda", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SeedEvents writes a batch's event items into the event table, as the
// event store had written them before the change feed delivered them.
func (e *Env) SeedEvents(t testing.TB, table string, payload []byte) {
	t.Helper()
	recs, err := host.ParseEvent(payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.EventName == host.EventInsert && r.DynamoDB.NewImage != nil {
			e.Put(t, table, r.DynamoDB.NewImage)
		}
	}
}

// RecordIDs returns a batch's records, raw, and their identifiers by
// position: the sequence number (dynamodb.SequenceNumber, or a Kinesis
// record's kinesis.sequenceNumber) and eventID.
func RecordIDs(t testing.TB, payload []byte) (raws []json.RawMessage, seq, eventID []string) {
	t.Helper()
	if err := json.Unmarshal(payload, &raws); err != nil {
		var ev struct{ Records []json.RawMessage }
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		raws = ev.Records
	}
	for _, r := range raws {
		var ids struct {
			EventID  string `json:"eventID"`
			DynamoDB struct{ SequenceNumber string }
			Kinesis  struct{ SequenceNumber string }
		}
		if err := json.Unmarshal(r, &ids); err != nil {
			t.Fatal(err)
		}
		seq = append(seq, ids.DynamoDB.SequenceNumber+ids.Kinesis.SequenceNumber)
		eventID = append(eventID, ids.EventID)
	}
	return raws, seq, eventID
}
