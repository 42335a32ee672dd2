package eventstore

import (
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
)

// Decoded is an image recognised as an event of one of a Decoder's streams.
type Decoded struct {
	Stream Stream    // the stream, as given to the decoder
	Event  abi.Event // the event; Event.Stream is the stream's name
}

// Decoder recognises event items of several streams by their __edd_e__
// marker. It is safe for concurrent use.
type Decoder struct {
	layout   Layout
	byMarker map[string]Stream
	streams  []Stream
	keys     bool                   // check each item's key against the layout
	prefixes map[string]keyPrefixes // by stream name
}

// NewDecoder returns a decoder for streams under the default casing and
// attribute names that knows no schema, and so checks no item's key: it
// recognises events by their marker and decodes their attributes. The
// host decodes with Layout.NewDecoder, which also checks keys. Two streams
// with one marker are a *ConfigError [EDD-9082].
func NewDecoder(streams ...Stream) (*Decoder, error) {
	d, err := Layout{Schema: "-"}.NewDecoder(streams...)
	if d != nil {
		d.keys = false
	}
	return d, err
}

// NewDecoder returns a decoder for streams stored under this layout. An
// item marked as an event of one of them whose key is not the one the
// layout derives from its stream id and version (its partition key from
// the stream id, its sort key from the version) does not decode.
func (l Layout) NewDecoder(streams ...Stream) (*Decoder, error) {
	d := &Decoder{layout: l, byMarker: map[string]Stream{}, keys: true, prefixes: map[string]keyPrefixes{}}
	for _, s := range streams {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		m := l.Marker(s.Name)
		if prev, ok := d.byMarker[m]; ok {
			return nil, &ConfigError{Code: "EDD-9082", Message: fmt.Sprintf(
				"streams %q and %q both store their events under the marker %s = %q; give them names that differ other than by case",
				prev.Name, s.Name, AttrMarker, m)}
		}
		d.byMarker[m] = s
		d.streams = append(d.streams, s)
		d.prefixes[s.Name] = l.prefixes(s.Name)
	}
	return d, nil
}

// Streams returns the decoder's streams, in the order given.
func (d *Decoder) Streams() []Stream { return append([]Stream(nil), d.streams...) }

// Markers returns the markers the decoder recognises, sorted.
func (d *Decoder) Markers() []string {
	out := make([]string, 0, len(d.byMarker))
	for m := range d.byMarker {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Stream returns the decoder's stream named name.
func (d *Decoder) Stream(name string) (Stream, bool) {
	for _, s := range d.streams {
		if s.Name == name {
			return s, true
		}
	}
	return Stream{}, false
}

// Decode decodes an image. An item that is not an event of one of the
// decoder's streams (no marker, another stream's, a snapshot, an idempotency
// sentinel, a read-model row) is "none": ok false and no error. An item marked
// as an event of one of them that does not decode is a *DecodeError; so is
// one stored under another key than its stream id's and version's.
func (d *Decoder) Decode(image abi.Item) (ev Decoded, ok bool, err error) {
	m, has := image[AttrMarker]
	if !has || m.Kind != abi.KindS {
		return Decoded{}, false, nil
	}
	s, known := d.byMarker[m.Str]
	if !known {
		return Decoded{}, false, nil
	}
	e, err := d.layout.decodeEvent(s, image, d.keys, d.prefixes[s.Name])
	if err != nil {
		return Decoded{}, false, err
	}
	return Decoded{Stream: s, Event: e}, true, nil
}
