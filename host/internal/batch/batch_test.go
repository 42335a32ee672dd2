package batch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var ctx = context.Background()

type fixture struct {
	env    *testenv.Env
	es     *eventstore.Store
	stream eventstore.Stream
	tables []string
	seq    int
}

func newFixture(t *testing.T) *fixture {
	env := testenv.Start(t)
	es, err := eventstore.New(dynamo.New(env.Client), env.Table(t, "events", true), eventstore.DefaultLayout("test", 1))
	require.NoError(t, err)
	return &fixture{env: env, es: es, stream: eventstore.Stream{Name: testlogic.Stream, Composite: []string{"acctId"}}}
}

func (f *fixture) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	return f.es.ReadFrom(ctx, f.stream, streamID, after, to)
}

// engine returns a ledger projection writing to a table of its own.
func (f *fixture) engine(t *testing.T, name string) *apply.Engine {
	table := f.env.Table(t, name, false)
	f.tables = append(f.tables, table)
	e, err := apply.New(apply.Projection{Name: name, Table: table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "version"}, Logic: &testlogic.Ledger{}}, dynamo.New(f.env.Client), f)
	require.NoError(t, err)
	return e
}

func (f *fixture) processor(t *testing.T, opts decode.Options, sideEffects []string, engines ...*apply.Engine) *batch.Processor {
	dec, err := f.es.Layout().NewDecoder(f.stream, eventstore.Stream{Name: "Payment", Composite: []string{"paymentId"}})
	require.NoError(t, err)
	opts.Decoder = dec
	p, err := batch.New(opts, engines, sideEffects)
	require.NoError(t, err)
	return p
}

// records appends events and returns their change-feed records (INSERTs
// with the stored image), identified like Lambda and Pipes would.
func (f *fixture) records(t *testing.T, stream eventstore.Stream, id string, types ...string) []decode.Record {
	head, err := f.es.Head(ctx, stream, id)
	require.NoError(t, err)
	var nes []eventstore.NewEvent
	for _, ty := range types {
		nes = append(nes, eventstore.NewEvent{Type: ty, Data: abi.Item{"n": abi.N("1")}})
	}
	evs, err := f.es.Append(ctx, stream, id, head, nes...)
	require.NoError(t, err)
	var out []decode.Record
	for _, ev := range evs {
		f.seq++
		out = append(out, decode.Record{EventID: fmt.Sprintf("eid-%d", f.seq), EventName: "INSERT",
			DynamoDB: decode.StreamRecord{NewImage: f.es.Layout().Item(ev), SequenceNumber: fmt.Sprintf("%021d", f.seq)}})
	}
	return out
}

func ids(r batch.Response) []string {
	out := []string{}
	for _, f := range r.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

func TestB1_ProcessBatchDecodesAppliesAndRespondsEmpty(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{}, nil, f.engine(t, "ledger"))
	recs := f.records(t, f.stream, "a", "Add", "Add")
	recs = append(recs, decode.Record{EventName: "MODIFY", DynamoDB: decode.StreamRecord{SequenceNumber: "999"}})

	res, err := p.Process(ctx, recs)

	require.NoError(t, err)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Empty(t, resp.BatchItemFailures)
	rows := res.Projections["ledger"].Rows
	require.Len(t, rows, 1)
	assert.Equal(t, 2, len(rows[0].Applied()))
	assert.Len(t, res.Decoded.Ignored, 1, "the MODIFY record is no event")
}

func TestB3_ReportsEarliestRecordOfEveryFailedRowAndEveryDecodeFailure(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{}, nil, f.engine(t, "ledger"))
	good := f.records(t, f.stream, "good", "Add")
	bad := f.records(t, f.stream, "bad", "Add", "Fail", "Add")
	broken := f.records(t, f.stream, "broken", "Add")
	broken[0].DynamoDB.NewImage["version"] = abi.S("not a number")
	// Batch order: bad v3, good v1, bad v1, broken v1, bad v2
	recs := []decode.Record{bad[2], good[0], bad[0], broken[0], bad[1]}

	res, err := p.Process(ctx, recs)

	require.NoError(t, err)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []string{bad[2].DynamoDB.SequenceNumber, broken[0].DynamoDB.SequenceNumber}, ids(resp),
		"the failed row's earliest record in the batch, and the record that failed to decode")
	require.Len(t, res.Decoded.Failures, 1)
	assert.Contains(t, res.Decoded.Failures[0].Err.Error(), "version")
}

func TestB2_PipeIdentifiersAreEventIDs(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{Source: decode.SourcePipe}, nil, f.engine(t, "ledger"))
	recs := f.records(t, f.stream, "bad", "Fail")

	res, err := p.Process(ctx, recs)

	require.NoError(t, err)
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []string{recs[0].EventID}, ids(resp))
}

func TestB3_FailedRecordWithoutIdentifierFailsTheCall(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{}, nil, f.engine(t, "ledger"))
	recs := f.records(t, f.stream, "bad", "Fail")
	recs[0].DynamoDB.SequenceNumber = ""

	_, err := p.Process(ctx, recs)

	require.Error(t, err)
	assert.True(t, errors.Is(err, batch.ErrStreamRecordIdentifierMissing))
	assert.Contains(t, err.Error(), "StreamRecordIdentifierMissing")
}

func TestB4_SkippedDecodeFailureIsAcknowledgedButListed(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{OnDecodeFailure: decode.OnFailureSkip}, nil, f.engine(t, "ledger"))
	recs := f.records(t, f.stream, "x", "Add")
	recs[0].DynamoDB.NewImage["data"] = abi.S("not a map")

	res, err := p.Process(ctx, recs)

	require.NoError(t, err)
	resp, _ := res.Response()
	assert.Empty(t, resp.BatchItemFailures)
	require.Len(t, res.Decoded.Failures, 1)
	assert.True(t, res.Decoded.Failures[0].Skipped)
}

func TestB5_CallersAddFailedRecordsAndRebuildTheResponse(t *testing.T) {
	f := newFixture(t)
	p := f.processor(t, decode.Options{}, nil, f.engine(t, "ledger"))
	recs := f.records(t, f.stream, "a", "Add", "Add")

	res, err := p.Process(ctx, recs)
	require.NoError(t, err)
	res.Fail(1) // a side effect of the second record failed

	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []string{recs[1].DynamoDB.SequenceNumber}, ids(resp))
}

func TestB6_SeveralProjectionsOneResponseAndUnroutedStreams(t *testing.T) {
	f := newFixture(t)
	a, b := f.engine(t, "first"), f.engine(t, "second")
	p := f.processor(t, decode.Options{}, []string{"Payment"}, a, b)
	payment := eventstore.Stream{Name: "Payment", Composite: []string{"paymentId"}}
	recs := append(f.records(t, f.stream, "acct", "Add"), f.records(t, payment, "pay-1", "Captured")...)

	res, err := p.Process(ctx, recs)

	require.NoError(t, err)
	for _, name := range []string{"first", "second"} {
		require.Len(t, res.Projections[name].Rows, 1, name)
		assert.Len(t, res.Projections[name].Rows[0].Applied(), 1, name)
	}
	require.Len(t, res.Unrouted, 1)
	assert.Equal(t, 1, res.Unrouted[0].Pos)
	assert.Equal(t, "Payment", res.Unrouted[0].Event.Stream)
}
