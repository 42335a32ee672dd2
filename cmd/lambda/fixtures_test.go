package main

import (
	"encoding/json"
	"testing"

	"github.com/dynafold/dynafold/internal/testenv"
)

func readFixture(t *testing.T, name string) []byte { return testenv.LambdaFixture(t, name) }

// seedEvents writes a batch's event items into the event table.
func seedEvents(t *testing.T, env *testenv.Env, table string, payload []byte) {
	env.SeedEvents(t, table, payload)
}

// recordIDs returns a batch's raw records and their identifiers.
func recordIDs(t *testing.T, payload []byte) (raws []json.RawMessage, seq, eventID []string) {
	return testenv.RecordIDs(t, payload)
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
