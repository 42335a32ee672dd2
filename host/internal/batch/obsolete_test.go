package batch_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestES7_ObsoleteMovesOnlyTheFailuresItIsTrueFor: the Obsolete hook is
// asked about each reported failure with an image (not a record without
// one), and the records it answers true for leave Decoded.Failures and
// the response: for Result.Obsolete when the item is gone or still no
// event, for Result.Corrected when the item as it is now decodes, whose
// event takes the record's place among Decoded.Events; every list keeps
// record order.
func TestES7_ObsoleteMovesOnlyTheFailuresItIsTrueFor(t *testing.T) {
	l := eventstore.DefaultLayout("test", 1)
	s := eventstore.Stream{Name: testlogic.Stream, Composite: []string{"acctId"}}
	dec, err := l.NewDecoder(s)
	require.NoError(t, err)
	p, err := batch.New(decode.Options{Decoder: dec}, nil, nil)
	require.NoError(t, err)
	bad := func(id string) abi.Item { // a stray item: the key of acct x, streamId id
		it := l.Item(abi.Event{Stream: s.Name, StreamID: id, Version: 1, Type: "Add", Data: abi.Item{}})
		it[l.PKName()] = l.Item(abi.Event{Stream: s.Name, StreamID: "x", Version: 1, Type: "Add"})[l.PKName()]
		return it
	}
	good := func(id string) abi.Item {
		return l.Item(abi.Event{Stream: s.Name, StreamID: id, Version: 1, Type: "Add", Data: abi.Item{}})
	}
	recs := []decode.Record{
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{NewImage: bad("gone-1"), SequenceNumber: "1"}},
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{NewImage: bad("kept"), SequenceNumber: "2"}},
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{SequenceNumber: "3"}}, // no image
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{NewImage: bad("fixed"), SequenceNumber: "4"}},
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{NewImage: good("y"), SequenceNumber: "5"}},
		{EventName: decode.EventInsert, DynamoDB: decode.StreamRecord{NewImage: bad("still-bad"), SequenceNumber: "6"}},
	}
	fixed, ok, err := dec.Decode(good("x"))
	require.True(t, ok)
	require.NoError(t, err)
	var mu sync.Mutex
	var asked []string
	p.Obsolete = func(_ context.Context, f decode.DecodeFailure) (bool, *decode.Event) {
		id := f.Image[eventstore.AttrStreamID].Str
		mu.Lock()
		asked = append(asked, id)
		mu.Unlock()
		switch id {
		case "kept":
			return false, nil
		case "fixed": // corrected: the streamId its key says
			return true, &decode.Event{Position: f.Position, Identifier: f.Identifier, Stream: fixed.Stream, Event: fixed.Event}
		case "still-bad": // passed over as the hook says
			return true, nil
		}
		return true, nil
	}
	res, err := p.Process(context.Background(), recs)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"gone-1", "kept", "fixed", "still-bad"}, asked, "the record without an image is not asked about")
	require.Len(t, res.Obsolete, 2)
	assert.Equal(t, []int{0, 5}, []int{res.Obsolete[0].Position, res.Obsolete[1].Position})
	require.Len(t, res.Corrected, 1)
	assert.Equal(t, 3, res.Corrected[0].Position)
	require.Len(t, res.Decoded.Events, 2)
	assert.Equal(t, []int{3, 4}, []int{res.Decoded.Events[0].Position, res.Decoded.Events[1].Position}, "the corrected event in record order")
	assert.Equal(t, "x", res.Decoded.Events[0].Event.StreamID, "the event as the item is now")
	assert.Equal(t, "4", res.Decoded.Events[0].Identifier)
	require.Len(t, res.Decoded.Failures, 2)
	assert.Equal(t, []int{1, 2}, []int{res.Decoded.Failures[0].Position, res.Decoded.Failures[1].Position})
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []batch.ItemFailure{{ItemIdentifier: "2"}, {ItemIdentifier: "3"}}, resp.BatchItemFailures)
	assert.Equal(t, "1", res.Identifier(0), "an obsolete record keeps its identifier")
}
