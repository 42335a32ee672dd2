package eventstore

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
)

// Built-in codec names.
const (
	CodecGzip    = "gzip"    // RFC 1952, compress/gzip
	CodecDeflate = "deflate" // RFC 1951 (raw deflate), compress/flate
)

// MaxUnpackedBytes bounds the size of an event's data after decompression:
// packed data that expands beyond it (a decompression bomb, or a corrupt
// item) does not decode.
const MaxUnpackedBytes = 16 << 20

// ErrUnknownCodec is matched by *UnknownCodecError.
var ErrUnknownCodec = errors.New("eventstore: unknown compression codec")

// UnknownCodecError is packed event data naming a codec the registry does
// not hold (when read), or a write configuration naming one.
type UnknownCodecError struct {
	Name  string   // the codec named
	Known []string // the registered codecs, sorted
}

// Error implements error.
func (e *UnknownCodecError) Error() string {
	return fmt.Sprintf("compression codec %q is not registered (registered: %q); register it on the host (host.WithCompression(%q, codec)) before reading or writing such events",
		e.Name, e.Known, e.Name)
}

// Is matches ErrUnknownCodec.
func (e *UnknownCodecError) Is(target error) bool { return target == ErrUnknownCodec }

// Codec compresses and decompresses packed event data. Implementations must
// be safe for concurrent use; Decompress must not trust its input.
type Codec interface {
	Compress(src []byte) ([]byte, error)
	Decompress(src []byte) ([]byte, error)
}

// CodecFuncs adapts two functions to a Codec.
type CodecFuncs struct {
	CompressFunc   func(src []byte) ([]byte, error)
	DecompressFunc func(src []byte) ([]byte, error)
}

// Compress implements Codec.
func (c CodecFuncs) Compress(src []byte) ([]byte, error) { return c.CompressFunc(src) }

// Decompress implements Codec.
func (c CodecFuncs) Decompress(src []byte) ([]byte, error) { return c.DecompressFunc(src) }

// Codecs is a registry of compression codecs by name. The zero value and
// nil hold only the built-ins (gzip, deflate). It is safe for concurrent
// use.
type Codecs struct {
	mu     sync.RWMutex
	byName map[string]Codec
}

// NewCodecs returns a registry holding the built-in codecs.
func NewCodecs() *Codecs { return &Codecs{} }

// Register adds a codec under name; it may replace a built-in. An empty name
// or a nil codec is an error.
func (c *Codecs) Register(name string, codec Codec) error {
	if name == "" || codec == nil {
		return &ConfigError{Message: fmt.Sprintf("compression: register codec %q: a codec needs a name and an implementation", name)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = map[string]Codec{}
	}
	c.byName[name] = codec
	return nil
}

// Lookup returns the codec registered under name, or *UnknownCodecError.
func (c *Codecs) Lookup(name string) (Codec, error) {
	if c != nil {
		c.mu.RLock()
		codec, ok := c.byName[name]
		c.mu.RUnlock()
		if ok {
			return codec, nil
		}
	}
	if codec, ok := builtin[name]; ok {
		return codec, nil
	}
	return nil, &UnknownCodecError{Name: name, Known: c.Names()}
}

// Names returns the registered codecs' names, sorted.
func (c *Codecs) Names() []string {
	seen := map[string]bool{}
	for n := range builtin {
		seen[n] = true
	}
	if c != nil {
		c.mu.RLock()
		for n := range c.byName {
			seen[n] = true
		}
		c.mu.RUnlock()
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var builtin = map[string]Codec{
	CodecGzip: CodecFuncs{
		CompressFunc: func(src []byte) ([]byte, error) {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			if _, err := w.Write(src); err != nil {
				return nil, err
			}
			if err := w.Close(); err != nil {
				return nil, err
			}
			return b.Bytes(), nil
		},
		DecompressFunc: func(src []byte) ([]byte, error) {
			r, _ := gzipReaders.Get().(*gzip.Reader)
			var err error
			if r == nil {
				r, err = gzip.NewReader(bytes.NewReader(src))
			} else {
				err = r.Reset(bytes.NewReader(src))
			}
			if err != nil {
				return nil, err
			}
			defer gzipReaders.Put(r)
			return readLimited(r, len(src))
		},
	},
	CodecDeflate: CodecFuncs{
		CompressFunc: func(src []byte) ([]byte, error) {
			var b bytes.Buffer
			w, err := flate.NewWriter(&b, flate.DefaultCompression)
			if err != nil {
				return nil, err
			}
			if _, err := w.Write(src); err != nil {
				return nil, err
			}
			if err := w.Close(); err != nil {
				return nil, err
			}
			return b.Bytes(), nil
		},
		DecompressFunc: func(src []byte) ([]byte, error) {
			r, _ := flateReaders.Get().(io.ReadCloser)
			if r == nil {
				r = flate.NewReader(bytes.NewReader(src))
			} else if err := r.(flate.Resetter).Reset(bytes.NewReader(src), nil); err != nil {
				return nil, err
			}
			defer flateReaders.Put(r)
			return readLimited(r, len(src))
		},
	},
}

// Decompressors are reused: each holds tens of KB of tables and window.
var gzipReaders, flateReaders sync.Pool

// readLimited reads r to its end, failing beyond MaxUnpackedBytes; packed
// is the compressed size (the buffer starts at a few times it).
func readLimited(r io.Reader, packed int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(4*packed+512, MaxUnpackedBytes+1)))
	if _, err := buf.ReadFrom(io.LimitReader(r, MaxUnpackedBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxUnpackedBytes {
		return nil, fmt.Errorf("unpacks to more than %d bytes", MaxUnpackedBytes)
	}
	return buf.Bytes(), nil
}
