package deliver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

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
	var key bytes.Buffer
	// A key of a kind with no JSON form writes what it can; the bytes are
	// still a function of the key, which is all the digest needs.
	_ = ddbjson.AppendItem(&key, e.Key)
	h := sha256.New()
	for _, f := range [...]string{
		idempotencyDomain, e.Projection, e.Stream, e.StreamID, key.String(),
		strconv.FormatUint(e.Version, 10), strconv.Itoa(e.Index),
	} {
		fmt.Fprintf(h, "%d:%s,", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
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
func (e Effect) JSON(enc Encoding) ([]byte, error) {
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
	b.WriteString(`{"idempotencyKey":"`)
	b.WriteString(e.IdempotencyKey())
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
	b.WriteString(strconv.FormatUint(e.Version, 10))
	b.WriteString(`,"index":`)
	b.WriteString(strconv.Itoa(e.Index))
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
