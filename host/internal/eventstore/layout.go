package eventstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// Casing is how a Layout cases the keys it composes.
type Casing uint8

// The key casings. CasingLower (the zero value) is the effect-dynamodb default.
const (
	CasingLower Casing = iota
	CasingUpper
	CasingPreserve
)

// MaxVersion is the highest stream version the 10-digit sort key can hold.
const MaxVersion = 9_999_999_999

// Default attribute names of the item layout.
const (
	AttrPK        = "pk"
	AttrSK        = "sk"
	AttrMarker    = "__edd_e__"
	AttrStreamID  = "streamId"
	AttrVersion   = "version"
	AttrEventType = "eventType"
	AttrData      = "data"
	AttrMetadata  = "metadata"
	AttrTimestamp = "timestamp"
	AttrTag       = "_tag"
)

// Layout is how events are stored. The default, DefaultLayout, is
// the effect-dynamodb EventStore's:
//
//	pk        $<schema>#v<schemaVersion>#<stream>#<composites>   (cased)
//	sk        $<schema>#v<schemaVersion>#<stream>.event_1#<version, 10 digits>
//	__edd_e__ <stream>.event   (stream name always lower-cased)
//	streamId  the stream id as given (never cased), version (N), eventType,
//	data (M, with _tag), metadata (M, optional), timestamp (ISO-8601)
//
// Casing applies to the whole key, composite values included, as in
// effect-dynamodb: under CasingLower the stream ids "O-1" and "o-1" address
// the same partition, and so the same stream (their versions collide and
// the second append conflicts). The streamId attribute keeps the id exactly
// as appended, so ids with upper-case letters round-trip through reads and
// the change feed. Use CasingPreserve for case-sensitive stream ids (keys
// then differ from effect-dynamodb's for upper-case names or ids).
type Layout struct {
	Schema        string // the schema (application) name, e.g. "shop"
	SchemaVersion int    // the schema version, e.g. 1
	Casing        Casing // key casing; CasingLower by default
	PKAttr        string // partition key attribute; "pk" when empty
	SKAttr        string // sort key attribute; "sk" when empty
	// Codecs decodes packed event data (see AttrDataCodec); nil: the
	// built-in codecs (gzip, deflate) only.
	Codecs *Codecs
}

// DefaultLayout returns the effect-dynamodb compatible layout for a schema.
func DefaultLayout(schema string, schemaVersion int) Layout {
	return Layout{Schema: schema, SchemaVersion: schemaVersion}
}

// Validate reports a layout that cannot compose keys.
func (l Layout) Validate() error {
	if l.Schema == "" {
		return &ConfigError{Message: "layout: a schema name is required (e.g. DefaultLayout(\"shop\", 1))"}
	}
	if l.SchemaVersion < 0 {
		return &ConfigError{Message: fmt.Sprintf("layout: schema version %d is negative", l.SchemaVersion)}
	}
	if l.PKAttr != "" && l.PKAttr == l.SKAttr {
		return &ConfigError{Message: "layout: partition and sort key attributes must differ"}
	}
	return nil
}

// PKName returns the partition key attribute's name.
func (l Layout) PKName() string {
	if l.PKAttr == "" {
		return AttrPK
	}
	return l.PKAttr
}

// SKName returns the sort key attribute's name.
func (l Layout) SKName() string {
	if l.SKAttr == "" {
		return AttrSK
	}
	return l.SKAttr
}

func (l Layout) cased(s string) string {
	switch l.Casing {
	case CasingUpper:
		return strings.ToUpper(s)
	case CasingPreserve:
		return s
	}
	return strings.ToLower(s)
}

func (l Layout) prefix() string {
	return "$" + l.Schema + "#v" + strconv.Itoa(l.SchemaVersion) + "#"
}

// PK returns the partition key of a stream instance.
func (l Layout) PK(stream, streamID string) string {
	return l.cased(l.prefix() + stream + IDSeparator + streamID)
}

// SKPrefix returns the prefix every event sort key of a stream begins with.
func (l Layout) SKPrefix(stream string) string {
	return l.cased(l.prefix() + stream + ".event_1#")
}

// SK returns the sort key of a stream's event at version.
func (l Layout) SK(stream string, version uint64) string {
	return l.SKPrefix(stream) + fmt.Sprintf("%010d", version)
}

// Marker returns the __edd_e__ value of a stream's events: the stream name
// lower-cased, then ".event", whatever the casing.
func (l Layout) Marker(stream string) string {
	return strings.ToLower(stream) + ".event"
}

// Key returns the primary key item of a stream's event.
func (l Layout) Key(stream, streamID string, version uint64) abi.Item {
	return abi.Item{l.PKName(): abi.S(l.PK(stream, streamID)), l.SKName(): abi.S(l.SK(stream, version))}
}
