package deliver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// Effect is one outbox effect as a target receives it: the value a plugin's
// effects export returned for an applied event, with where it comes from.
type Effect struct {
	// Projection is the projection whose outbox held the effect; it may be
	// empty (a host with one projection need not set it).
	Projection string
	// Stream is the name of the event's stream, e.g. "Order".
	Stream string
	// StreamID is the event's stream instance: its composites joined with '#'.
	StreamID string
	// Version is the event's version in its stream instance, from 1.
	Version uint64
	// Index is the effect's position among the effects its event produced
	// for this row, from 0.
	Index int
	// Key is the primary key of the row whose write committed the effect.
	Key abi.Item
	// Value is the effect as the plugin returned it (usually an M).
	Value abi.Value
}

// idempotencyDomain starts the text IdempotencyKey hashes; a new form of the
// key would change it.
const idempotencyDomain = "dynafold-effect-1"

// IdempotencyKey returns the effect's idempotency key: 64 lowercase hex
// digits of a SHA-256. The same effect has the same key on every delivery,
// in every process, so a consumer deduplicates on it.
//
// The digest is taken over these fields, each written as a netstring
// ("<length in bytes>:<bytes>,"): "dynafold-effect-1", Projection, Stream,
// StreamID, the row key in DynamoDB JSON with attributes sorted ("{}" when
// there is none), Version in decimal, Index in decimal. Besides the event
// (stream, stream id, version) and the index, the key includes the row and
// the projection: one event can produce effects in several rows' outboxes,
// and those are different effects that must not deduplicate one another.
func (e Effect) IdempotencyKey() string {
	var sum [2 * sha256.Size]byte
	return string(e.appendIdempotencyKey(sum[:0]))
}

// appendIdempotencyKey appends the effect's idempotency key to b: the row
// key written into a pooled buffer, the netstrings after it, hashed at once.
func (e Effect) appendIdempotencyKey(b []byte) []byte {
	buf := keyBufs.Get().(*bytes.Buffer)
	buf.Reset()
	// A key of a kind with no JSON form writes what it can; the bytes are
	// still a function of the key, which is all the digest needs.
	_ = ddbjson.AppendItem(buf, e.Key)
	key := buf.Bytes()
	var d [20]byte
	t := buf.AvailableBuffer()
	t = netstring(t, idempotencyDomain)
	t = netstring(t, e.Projection)
	t = netstring(t, e.Stream)
	t = netstring(t, e.StreamID)
	t = netstring(t, key)
	t = netstring(t, strconv.AppendUint(d[:0], e.Version, 10))
	t = netstring(t, strconv.AppendInt(d[:0], int64(e.Index), 10))
	sum := sha256.Sum256(t)
	if buf.Cap() <= 64<<10 {
		keyBufs.Put(buf)
	}
	return hex.AppendEncode(b, sum[:])
}

var keyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// netstring appends s as "<length in bytes>:<s>,".
func netstring[S string | []byte](b []byte, s S) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, ',')
}

// describe names the effect in error messages.
func (e Effect) describe() string {
	s := fmt.Sprintf("effect %d of %s %s v%d", e.Index, e.Stream, e.StreamID, e.Version)
	if e.Projection != "" {
		s = e.Projection + " " + s
	}
	return s
}

// Encoding is how the row key and the effect are written in an effect's
// JSON form (see the package documentation).
type Encoding int

const (
	// Plain writes them as plain JSON, numbers with DynamoDB's exact digits.
	Plain Encoding = iota
	// DynamoDBJSON writes them in DynamoDB JSON, which keeps every type.
	DynamoDBJSON
)

// String returns "plain" or "dynamodb-json".
func (enc Encoding) String() string {
	switch enc {
	case Plain:
		return "plain"
	case DynamoDBJSON:
		return "dynamodb-json"
	}
	return "Encoding(" + strconv.Itoa(int(enc)) + ")"
}

// MarshalJSON returns the effect's JSON form in the Plain encoding.
func (e Effect) MarshalJSON() ([]byte, error) { return e.JSON(Plain) }

// JSON returns the effect's JSON form in encoding enc. It fails when the row
// key or the effect holds a value with no JSON form (a Value of no DynamoDB
// type, or an N that is not a number).
func (e Effect) JSON(enc Encoding) ([]byte, error) { return e.json(enc, "") }

// json is JSON with the effect's idempotency key given (a target that
// sends it in a header too computes it once), or computed when "".
func (e Effect) json(enc Encoding, key string) ([]byte, error) {
	var (
		item  func(*bytes.Buffer, abi.Item) error
		value func(*bytes.Buffer, abi.Value) error
	)
	switch enc {
	case Plain:
		item, value = appendPlainItem, appendPlain
	case DynamoDBJSON:
		item, value = ddbjson.AppendItem, ddbjson.AppendValue
	default:
		return nil, fmt.Errorf("%s: unknown encoding %d", e.describe(), int(enc))
	}
	var b bytes.Buffer
	b.Grow(256)
	b.WriteString(`{"idempotencyKey":"`)
	if key != "" {
		b.WriteString(key)
	} else {
		b.Write(e.appendIdempotencyKey(b.AvailableBuffer()))
	}
	b.WriteByte('"')
	if e.Projection != "" {
		b.WriteString(`,"projection":`)
		ddbjson.AppendString(&b, e.Projection)
	}
	b.WriteString(`,"stream":`)
	ddbjson.AppendString(&b, e.Stream)
	b.WriteString(`,"streamId":`)
	ddbjson.AppendString(&b, e.StreamID)
	b.WriteString(`,"version":`)
	b.Write(strconv.AppendUint(b.AvailableBuffer(), e.Version, 10))
	b.WriteString(`,"index":`)
	b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(e.Index), 10))
	b.WriteString(`,"key":`)
	if err := item(&b, e.Key); err != nil {
		return nil, fmt.Errorf("%s: row key has no JSON form: %w", e.describe(), err)
	}
	b.WriteString(`,"effect":`)
	if err := value(&b, e.Value); err != nil {
		return nil, fmt.Errorf("%s: value has no JSON form: %w", e.describe(), err)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
