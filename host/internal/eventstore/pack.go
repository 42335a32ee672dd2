package eventstore

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// AttrDataCodec names the codec of packed event data.
//
// Packed data: the event's data map (with its _tag) written as DynamoDB
// JSON ({"_tag":{"S":"OrderPlaced"},...}), compressed by the codec, stored
// as the binary (B) data attribute, with the codec's name in the dataCodec
// (S) attribute. Every other attribute (eventType, streamId, version …) is
// stored as usual, so filters and the decoder's marker still work.
const AttrDataCodec = "dataCodec"

// Packing is how appends pack event data: with Codec, when the data's
// DynamoDB JSON has at least MinBytes bytes (0: always). A zero Packing
// (no codec) never packs.
type Packing struct {
	Codec    string
	MinBytes int
}

// PackData returns the packed form of data (with its _tag) under the
// layout's codec named codec: the B value and whether it was packed (false
// when the JSON is shorter than minBytes).
func (l Layout) PackData(data abi.Item, p Packing) (abi.Value, bool, error) {
	if p.Codec == "" {
		return abi.Value{}, false, nil
	}
	raw, err := ddbjson.ItemToJSON(data)
	if err != nil {
		return abi.Value{}, false, fmt.Errorf("eventstore: pack data: %w", err)
	}
	if len(raw) < p.MinBytes {
		return abi.Value{}, false, nil
	}
	codec, err := l.Codecs.Lookup(p.Codec)
	if err != nil {
		return abi.Value{}, false, err
	}
	b, err := codec.Compress(raw)
	if err != nil {
		return abi.Value{}, false, fmt.Errorf("eventstore: pack data with codec %q: %w", p.Codec, err)
	}
	return abi.B(b), true, nil
}

// PackedItem is Item with the data packed by p (see AttrDataCodec).
func (l Layout) PackedItem(e abi.Event, p Packing) (abi.Item, error) {
	item := l.Item(e)
	v, ok, err := l.PackData(item[AttrData].Map, p)
	if err != nil || !ok {
		return item, err
	}
	item[AttrData] = v
	item[AttrDataCodec] = abi.S(p.Codec)
	return item, nil
}

// unpackData decodes packed data (a B data attribute) through the codec
// its dataCodec attribute names; fail builds the decode error.
func (l Layout) unpackData(item abi.Item, d abi.Value, fail func(attr, problem string, err error) error) (abi.Item, error) {
	c, ok := item[AttrDataCodec]
	switch {
	case !ok:
		return nil, fail(AttrDataCodec, "is missing: data is binary (packed) but no codec is named", nil)
	case c.Kind != abi.KindS:
		return nil, fail(AttrDataCodec, fmt.Sprintf("is of type %s, want S (a codec name)", c.Kind), nil)
	}
	codec, err := l.Codecs.Lookup(c.Str)
	if err != nil {
		return nil, fail(AttrDataCodec, fmt.Sprintf("names codec %q, which is not registered (registered: %q)", c.Str, l.Codecs.Names()), err)
	}
	raw, err := codec.Decompress(d.Bytes)
	if err != nil {
		return nil, fail(AttrData, fmt.Sprintf("does not decompress with codec %q: %v", c.Str, err), err)
	}
	m, err := ddbjson.DecodeItem(raw)
	if err != nil {
		return nil, fail(AttrData, fmt.Sprintf("unpacked with codec %q is not a DynamoDB JSON map: %v", c.Str, err), err)
	}
	return m, nil
}
