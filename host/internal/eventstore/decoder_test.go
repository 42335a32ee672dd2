package eventstore_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

type imageCase struct {
	Name      string          `json:"name"`
	Want      string          `json:"want"` // event, none, error
	Stream    string          `json:"stream"`
	Version   uint64          `json:"version"`
	StreamID  string          `json:"streamId"`
	Attribute string          `json:"attribute"`
	Image     json.RawMessage `json:"image"`
}

func TestES4_DecoderDispatchesOnMarker(t *testing.T) {
	raw, err := os.ReadFile("testdata/images.json")
	require.NoError(t, err)
	var cases []imageCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.NotEmpty(t, cases)
	d, err := eventstore.NewDecoder(orderStream, sensorStream)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			image, err := ddbjson.ItemFromJSON(c.Image)
			require.NoError(t, err)
			got, ok, err := d.Decode(image)
			switch c.Want {
			case "event":
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, c.Stream, got.Stream.Name)
				assert.Equal(t, c.Stream, got.Event.Stream)
				assert.Equal(t, c.Version, got.Event.Version)
				assert.Equal(t, c.StreamID, got.Event.StreamID)
				assert.Equal(t, got.Event.Type, got.Event.Data["_tag"].Str)
			case "none":
				require.NoError(t, err)
				assert.False(t, ok)
			case "error":
				assert.False(t, ok)
				var de *eventstore.DecodeError
				require.True(t, errors.As(err, &de), "want *DecodeError, got %v", err)
				assert.ErrorIs(t, err, eventstore.ErrDecode)
				assert.Equal(t, c.Attribute, de.Attribute)
				assert.Contains(t, err.Error(), c.Attribute)
				assert.Contains(t, err.Error(), "repair or remove", "the error says what to do")
			default:
				t.Fatalf("bad case %q", c.Want)
			}
		})
	}
}

func TestES4_TwoStreamsOneMarkerIsEDD9082(t *testing.T) {
	_, err := eventstore.NewDecoder(orderStream, eventstore.Stream{Name: "ORDER", Composite: []string{"id"}})
	require.ErrorIs(t, err, eventstore.ErrConfig)
	assert.True(t, strings.Contains(err.Error(), "[EDD-9082]"), "error %q names EDD-9082", err)
	assert.Contains(t, err.Error(), "order.event")
}

func TestES4_DecoderListsStreamsAndMarkers(t *testing.T) {
	d, err := eventstore.NewDecoder(sensorStream, orderStream)
	require.NoError(t, err)
	assert.Equal(t, []string{"order.event", "sensor.event"}, d.Markers())
	s, ok := d.Stream("Sensor")
	require.True(t, ok)
	assert.Equal(t, sensorStream.Composite, s.Composite)
	_, err = eventstore.NewDecoder(eventstore.Stream{Name: "bad"})
	require.ErrorIs(t, err, eventstore.ErrValidation)
}
