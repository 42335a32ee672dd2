package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "host", "lambda", "testdata", name)) // the handler's fixtures
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seedEvents writes a batch's event items into the event table, as the
// event store had before the change feed delivered them.
func seedEvents(t *testing.T, env *testenv.Env, table string, payload []byte) {
	t.Helper()
	recs, err := host.ParseEvent(payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.EventName == host.EventInsert && r.DynamoDB.NewImage != nil {
			env.Put(t, table, r.DynamoDB.NewImage)
		}
	}
}

// recordIDs returns a batch's raw records and their identifiers.
func recordIDs(t *testing.T, payload []byte) (raws []json.RawMessage, seq, eventID []string) {
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
		}
		if err := json.Unmarshal(r, &ids); err != nil {
			t.Fatal(err)
		}
		seq = append(seq, ids.DynamoDB.SequenceNumber)
		eventID = append(eventID, ids.EventID)
	}
	return raws, seq, eventID
}

func equalIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
