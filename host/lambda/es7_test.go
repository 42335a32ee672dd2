package lambda_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// TestES7_LambdaAcknowledgesARecordWhoseItemWasRemoved: the decode
// failure fixture's record 2 (o-6's event, its version stored as a
// string) is reported while its item is in the event table; once the
// item is removed, the redelivered batch reports no record: Lambda moves
// past it rather than retrying it until it expires. The invocation's
// summary line counts it (passedOver).
func TestES7_LambdaAcknowledgesARecordWhoseItemWasRemoved(t *testing.T) {
	f, ev, rec, logs := failingDecode(t)
	f.env.Delete(t, f.events, rec.DynamoDB.Keys)
	logs.Reset()
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("after the item was removed: batchItemFailures = %v, want none", ids)
	}
	f.wantRow(t, "o-4", summary{"shipped", "1", "3", "3"})
	f.wantNoRow(t, "o-6")
	if !strings.Contains(logs.String(), `"passedOver":1`) {
		t.Errorf("the summary line does not count the record passed over: %s", logs.String())
	}
}

// TestES7_LambdaFoldsARecordWhoseItemWasCorrectedAsItIsNow: the same
// record, once its item is corrected in place (its version a number), is
// folded from the item as it is now in the redelivered batch: o-6's row
// exists at once, no record is reported, and the summary line counts it
// (correctedSince).
func TestES7_LambdaFoldsARecordWhoseItemWasCorrectedAsItIsNow(t *testing.T) {
	f, ev, rec, logs := failingDecode(t)
	fixed := abi.CloneItem(rec.DynamoDB.NewImage)
	fixed["version"] = abi.N(fixed["version"].Str)
	f.env.Put(t, f.events, fixed)
	logs.Reset()
	if ids := f.mustInvoke(t, ev); len(ids) != 0 {
		t.Fatalf("after the item was corrected: batchItemFailures = %v, want none", ids)
	}
	if f.row(t, "o-6") == nil {
		t.Error("o-6's row is absent: the corrected event was not folded")
	}
	if !strings.Contains(logs.String(), `"correctedSince":1`) {
		t.Errorf("the summary line does not count the record folded from its corrected item: %s", logs.String())
	}
}

// failingDecode invokes a function of the order summaries with the decode
// failure fixture, whose record 2 (o-6's event, its version stored as a
// string) fails, and checks it is the one reported. It returns the
// function, the batch, that record and the function's JSON log.
func failingDecode(t *testing.T) (*fn, json.RawMessage, host.Record, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	f := newFn(t, setup{log: slog.New(slog.NewJSONHandler(logs, nil))})
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
	return f, ev, recs[0], logs
}
