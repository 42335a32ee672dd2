package eventstore_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/eventstore"
)

var (
	orderStream  = eventstore.Stream{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}
	sensorStream = eventstore.Stream{Name: "Sensor", EventTypes: []string{"SensorPlaced", "SensorReading"}, Composite: []string{"siteId", "sensorId"}}
)

func TestES1_StreamIDJoinAndParse(t *testing.T) {
	cases := []struct {
		name    string
		stream  eventstore.Stream
		values  []string
		id      string
		wantErr string // the field named by the ValidationError; "" for success
	}{
		{name: "single field", stream: orderStream, values: []string{"O-1"}, id: "O-1"},
		{name: "single field may contain #", stream: orderStream, values: []string{"a#b"}, id: "a#b"},
		{name: "two fields", stream: sensorStream, values: []string{"Site-9", "s-1"}, id: "Site-9#s-1"},
		{name: "# in a multi-field value", stream: sensorStream, values: []string{"site#9", "s-1"}, wantErr: "siteId"},
		{name: "too few values", stream: sensorStream, values: []string{"site"}, wantErr: "streamId"},
		{name: "empty value", stream: sensorStream, values: []string{"", "s-1"}, wantErr: "siteId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := c.stream.JoinID(c.values...)
			if c.wantErr != "" {
				var ve *eventstore.ValidationError
				require.True(t, errors.As(err, &ve), "want *ValidationError, got %v", err)
				assert.ErrorIs(t, err, eventstore.ErrValidation)
				assert.Equal(t, c.wantErr, ve.Field)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.id, id)
			fields, err := c.stream.ParseID(id)
			require.NoError(t, err)
			for i, f := range c.stream.Composite {
				assert.Equal(t, c.values[i], fields[f])
			}
			again, err := c.stream.ID(fields)
			require.NoError(t, err)
			assert.Equal(t, id, again)
		})
	}
}

func TestES1_ParseAmbiguousMultiFieldIDIsValidationError(t *testing.T) {
	for _, id := range []string{"a#b#c", "a", "a#", "#b"} {
		_, err := sensorStream.ParseID(id)
		require.ErrorIs(t, err, eventstore.ErrValidation, "id %q", id)
	}
}

func TestES1_InvalidStreamDefinitions(t *testing.T) {
	for _, s := range []eventstore.Stream{
		{Composite: []string{"id"}},
		{Name: "X"},
		{Name: "X", Composite: []string{"a", "a"}},
	} {
		require.ErrorIs(t, s.Validate(), eventstore.ErrValidation, "%+v", s)
	}
	require.NoError(t, orderStream.Validate())
}
