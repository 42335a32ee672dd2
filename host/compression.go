package host

import (
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// Codec compresses and decompresses packed event data: an event item whose
// data attribute is binary, with the codec's name in its dataCodec
// attribute, holds the event's data map as DynamoDB JSON compressed by the
// codec. Implementations must be safe for concurrent use and must not trust
// what they decompress.
type Codec interface {
	Compress(src []byte) ([]byte, error)
	Decompress(src []byte) ([]byte, error)
}

// CodecFuncs adapts a compress and a decompress function to a Codec.
type CodecFuncs struct {
	CompressFunc   func(src []byte) ([]byte, error)
	DecompressFunc func(src []byte) ([]byte, error)
}

// Compress implements Codec.
func (c CodecFuncs) Compress(src []byte) ([]byte, error) { return c.CompressFunc(src) }

// Decompress implements Codec.
func (c CodecFuncs) Decompress(src []byte) ([]byte, error) { return c.DecompressFunc(src) }

// The built-in codecs, always registered.
const (
	CodecGzip    = eventstore.CodecGzip    // gzip (compress/gzip)
	CodecDeflate = eventstore.CodecDeflate // raw deflate (compress/flate)
)

// ErrUnknownCodec is matched by the decode failure of an event whose
// packed data names a codec the host does not have, and by New when
// eventStore.compression names one.
var ErrUnknownCodec = eventstore.ErrUnknownCodec

// WithCompression registers a codec for packed event data under name (it
// may replace a built-in). Every host reading a table must register the
// codecs its writers pack with; eventStore.compression.codec may name it.
func WithCompression(name string, c Codec) Option {
	return func(o *options) { o.codecs = append(o.codecs, namedCodec{name, c}) }
}

type namedCodec struct {
	name  string
	codec Codec
}

// CompressionConfig is how Append packs event data.
type CompressionConfig struct {
	// Codec names the codec appends pack with: "gzip", "deflate" or one
	// registered with WithCompression (required).
	Codec string `json:"codec"`
	// MinBytes packs only data whose DynamoDB JSON has at least this many
	// bytes; 0 (or absent) packs every event's data.
	MinBytes int `json:"minBytes,omitempty"`
}

// codecRegistry returns the built-in codecs and those of WithCompression.
func (o options) codecRegistry() (*eventstore.Codecs, error) {
	reg := eventstore.NewCodecs()
	for _, nc := range o.codecs {
		if err := reg.Register(nc.name, nc.codec); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func (c *CompressionConfig) packing() eventstore.Packing {
	if c == nil {
		return eventstore.Packing{}
	}
	return eventstore.Packing{Codec: c.Codec, MinBytes: c.MinBytes}
}

func (c *CompressionConfig) validate(ps *problems) {
	if c == nil {
		return
	}
	if c.Codec == "" {
		ps.add("eventStore.compression.codec", "is required: name the codec appends pack event data with, e.g. %q", CodecGzip)
	}
	if c.MinBytes < 0 {
		ps.add("eventStore.compression.minBytes", "%d is negative: use 0 (pack every event) or a size in bytes", c.MinBytes)
	}
}
