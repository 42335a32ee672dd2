package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// stocked is a Stocked event carrying a note of n bytes.
func stocked(n int) host.NewEvent {
	return host.NewEvent{Type: "Stocked", Data: abi.Item{"qty": abi.N("1"), "note": abi.S(strings.Repeat("x", n))}}
}

// TestES2_AppendOfAnEventOver400KBNamesItAndIsAnInvalidEvent: an event
// whose item is over DynamoDB's 400 KB is refused before the transaction,
// with an error matching ErrInvalidEvent that names the event (index and
// type), its size against the limit, and packed data; the stream is left
// as it was. The size Append counts agrees with ddblocal's at the limit:
// an item of exactly 400 KB is stored, one byte more is refused by both.
func TestES2_AppendOfAnEventOver400KBNamesItAndIsAnInvalidEvent(t *testing.T) {
	ctx := context.Background()
	h, env, events, _ := stockHost(t, "")
	_, err := h.Append(ctx, "Warehouse", "w1", 0, stocked(10))
	require.NoError(t, err)

	// the user's event: a 409,500-byte attribute
	_, err = h.Append(ctx, "Warehouse", "w1", 1, stocked(10), stocked(409_500))
	require.ErrorIs(t, err, host.ErrInvalidEvent)
	msg := err.Error()
	for _, want := range []string{"event 1 (Stocked)", "over DynamoDB's item limit of 409600 bytes (400 KB)", "eventStore.compression", "docs/EVENTS.md"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, msg, "TransactWriteItems", "refused before the call")
	head, err := h.Head(ctx, "Warehouse", "w1")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head, "nothing of the refused append is stored")

	// at the limit: pad the note so the item of version 2 is 400 KB exactly
	sized := func(n int) abi.Item {
		ev := stocked(n)
		return h.EventItem(abi.Event{Stream: "Warehouse", StreamID: "w1", Version: 2, Type: ev.Type, Data: ev.Data,
			Timestamp: "2026-12-05T00:00:00.000Z"})
	}
	pad := 409_000 + itemcheck.MaxItemSize - itemcheck.Size(sized(409_000))
	require.Equal(t, itemcheck.MaxItemSize, itemcheck.Size(sized(pad)))
	_, err = h.Append(ctx, "Warehouse", "w1", 1, stocked(pad+1))
	require.ErrorIs(t, err, host.ErrInvalidEvent, "one byte over")
	assert.Contains(t, err.Error(), "its item is 409601 bytes")
	m, err := ddbclient.ToAttributeMap(sized(pad + 1))
	require.NoError(t, err)
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &events, Item: m})
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "ddblocal refuses the item one byte over too: %v", err)
	assert.Equal(t, "ValidationException", ae.ErrorCode())
	assert.Equal(t, "Item size has exceeded the maximum allowed size", ae.ErrorMessage())
	_, err = h.Append(ctx, "Warehouse", "w1", 1, stocked(pad))
	require.NoError(t, err, "an item of 400 KB exactly is stored")
}

// TestES2_AppendHolds100EventsToANewStreamAnd99ToAnExistingOne: one
// transaction item checks the expected version of an append to an existing
// stream, so it holds one event fewer; the error of one more matches
// ErrAppendTooLarge and names the limit in events.
func TestES2_AppendHolds100EventsToANewStreamAnd99ToAnExistingOne(t *testing.T) {
	ctx := context.Background()
	h, _, _, _ := stockHost(t, "")
	batch := func(n int) []host.NewEvent {
		evs := make([]host.NewEvent, n)
		for i := range evs {
			evs[i] = stocked(1)
		}
		return evs
	}
	_, err := h.Append(ctx, "Warehouse", "w1", 0, batch(101)...)
	require.ErrorIs(t, err, host.ErrAppendTooLarge)
	assert.Contains(t, err.Error(), "append of 101 events")
	assert.Contains(t, err.Error(), "over the limit of 100 events")
	_, err = h.Append(ctx, "Warehouse", "w1", 0, batch(100)...)
	require.NoError(t, err, "100 events to a new stream")

	_, err = h.Append(ctx, "Warehouse", "w1", 100, batch(100)...)
	require.ErrorIs(t, err, host.ErrAppendTooLarge)
	assert.Contains(t, err.Error(), "append of 100 events")
	assert.Contains(t, err.Error(), "over the limit of 99 events (100 to a new stream, 99 to an existing one")
	_, err = h.Append(ctx, "Warehouse", "w1", 100, batch(99)...)
	require.NoError(t, err, "99 events to an existing stream")
	head, err := h.Head(ctx, "Warehouse", "w1")
	require.NoError(t, err)
	assert.Equal(t, uint64(199), head)
}
