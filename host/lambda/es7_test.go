package lambda_test

import (
	"testing"

	"github.com/dynafold/dynafold/host"
)

// TestES7_LambdaAcknowledgesARecordWhoseItemWasRemoved: the decode
// failure fixture's record 2 (o-6's event, its version stored as a
// string) is reported while its item is in the event table; once the
// item is removed, the redelivered batch reports no record: Lambda moves
// past it rather than retrying it until it expires.
func TestES7_LambdaAcknowledgesARecordWhoseItemWasRemoved(t *testing.T) {
	f := newFn(t, setup{})
	ev := fixture(t, "decode_failure.json")
	f.seed(t, ev)
	raws, seq, _ := records(t, ev)
	if ids := f.mustInvoke(t, ev); !equal(ids, []string{seq[2]}) {
		t.Fatalf("batchItemFailures = %v, want [%s]", ids, seq[2])
	}
	recs, err := host.ParseEvent(streamEvent(t, raws[2]))
	if err != nil {
		t.Fatal(err)
	}
	f.env.Delete(t, f.events, recs[0].DynamoDB.Keys)
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("after the item was removed: batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-4", summary{"shipped", "1", "3", "3"})
	f.wantNoRow(t, "o-6")
}
