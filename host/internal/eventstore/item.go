package eventstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dynafold/dynafold/abi"
)

// TimestampFormat is how appends write the timestamp attribute (ISO-8601,
// UTC, milliseconds, as JavaScript's toISOString).
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// Item returns the stored item of an event under the layout. The event's
// Data gets its _tag (the event type) when it lacks one.
func (l Layout) Item(e abi.Event) abi.Item {
	data := abi.CloneItem(e.Data)
	if data == nil {
		data = abi.Item{}
	}
	if _, ok := data[AttrTag]; !ok {
		data[AttrTag] = abi.S(e.Type)
	}
	item := abi.Item{
		l.PKName():    abi.S(l.PK(e.Stream, e.StreamID)),
		l.SKName():    abi.S(l.SK(e.Stream, e.Version)),
		AttrMarker:    abi.S(l.Marker(e.Stream)),
		AttrStreamID:  abi.S(e.StreamID),
		AttrVersion:   abi.N(strconv.FormatUint(e.Version, 10)),
		AttrEventType: abi.S(e.Type),
		AttrData:      abi.M(data),
		AttrTimestamp: abi.S(e.Timestamp),
	}
	if e.Metadata != nil {
		item[AttrMetadata] = abi.M(abi.CloneItem(e.Metadata))
	}
	return item
}

const unknownCodecHint = "register the codec on every host that reads this table (host.WithCompression(name, codec)), then let the record be redelivered; it is reported failed until then, not lost"

// passOverHint says what becomes of a change-feed record of an item that
// does not decode once the item is repaired (host.Result.Obsolete and
// host.Result.Corrected).
const passOverHint = "; a change-feed record of the item cannot change, but at its next attempt it is passed over once the item is removed, and folded from the item as it is now once the item is corrected (until then it fails again, and a failure policy gives it up after its retries)"

const keyHint = "an event is stored under the key its layout derives from its stream id and version, as an append writes it; this item was written otherwise (a hand fix, a migration, another writer): put the event under that key, or correct its streamId or version, or remove the item; it is never folded, and until it is repaired a read of its partition's events stops at it" + passOverHint

const decodeHint = "the stored item is not a valid event: repair or remove it (with onDecodeFailure \"skip\" the record is acknowledged but the next event of its row still reads it)" + passOverHint

// decodeEvent decodes an item already known (by its marker) to be an event
// of stream s. With checkKey, an item whose key is not the one the layout
// derives from its stream id and version (pre: the stream's key prefixes)
// is a *DecodeError (ErrKeyMismatch).
func (l Layout) decodeEvent(s Stream, item abi.Item, checkKey bool, pre keyPrefixes) (abi.Event, error) {
	failErr := func(attr, problem string, err error) error {
		hint := decodeHint
		if errors.Is(err, ErrUnknownCodec) {
			hint = unknownCodecHint
		}
		return &DecodeError{Stream: s.Name, PK: item[l.PKName()].Str, SK: item[l.SKName()].Str,
			Attribute: attr, Problem: problem, Hint: hint, Err: err}
	}
	fail := func(attr, problem string) error { return failErr(attr, problem, nil) }
	str := func(attr string) (string, error) {
		v, ok := item[attr]
		if !ok {
			return "", fail(attr, "is missing")
		}
		if v.Kind != abi.KindS {
			return "", fail(attr, fmt.Sprintf("is of type %s, want S", v.Kind))
		}
		return v.Str, nil
	}
	e := abi.Event{Stream: s.Name}
	var err error
	if e.StreamID, err = str(AttrStreamID); err != nil {
		return abi.Event{}, err
	}
	if e.StreamID == "" {
		return abi.Event{}, fail(AttrStreamID, "is empty")
	}
	v, ok := item[AttrVersion]
	switch {
	case !ok:
		return abi.Event{}, fail(AttrVersion, "is missing")
	case v.Kind != abi.KindN:
		return abi.Event{}, fail(AttrVersion, fmt.Sprintf("is of type %s, want N", v.Kind))
	}
	if e.Version, err = strconv.ParseUint(v.Str, 10, 64); err != nil || e.Version == 0 || e.Version > MaxVersion {
		return abi.Event{}, fail(AttrVersion, fmt.Sprintf("is %q, want an integer from 1 to %d", v.Str, uint64(MaxVersion)))
	}
	if e.Type, err = str(AttrEventType); err != nil {
		return abi.Event{}, err
	}
	if !s.HasEventType(e.Type) {
		return abi.Event{}, fail(AttrEventType, fmt.Sprintf("is %q, not one of the stream's event types %q", e.Type, s.EventTypes))
	}
	if err := checkStreamID(s, e.StreamID); err != nil {
		return abi.Event{}, failErr(AttrStreamID, err.Error(), err)
	}
	if checkKey {
		if attr, problem := l.keyMismatch(s.Name, pre, item, e.StreamID, e.Version); attr != "" {
			return abi.Event{}, &DecodeError{Stream: s.Name, PK: item[l.PKName()].Str, SK: item[l.SKName()].Str,
				Attribute: attr, Problem: problem, Hint: keyHint, Err: ErrKeyMismatch}
		}
	}
	d, ok := item[AttrData]
	switch {
	case !ok:
		return abi.Event{}, fail(AttrData, "is missing")
	case d.Kind == abi.KindB:
		m, err := l.unpackData(item, d, failErr)
		if err != nil {
			return abi.Event{}, err
		}
		d = abi.M(m)
	case d.Kind != abi.KindM:
		return abi.Event{}, fail(AttrData, fmt.Sprintf("is of type %s, want M (a map with _tag), or B (packed, with %s)", d.Kind, AttrDataCodec))
	}
	tag, ok := d.Map[AttrTag]
	switch {
	case !ok:
		return abi.Event{}, fail(AttrData+"."+AttrTag, "is missing")
	case tag.Kind != abi.KindS:
		return abi.Event{}, fail(AttrData+"."+AttrTag, fmt.Sprintf("is of type %s, want S", tag.Kind))
	case tag.Str != e.Type:
		return abi.Event{}, fail(AttrData+"."+AttrTag, fmt.Sprintf("is %q but eventType is %q", tag.Str, e.Type))
	}
	e.Data = d.Map
	if m, ok := item[AttrMetadata]; ok && m.Kind != abi.KindNULL {
		if m.Kind != abi.KindM {
			return abi.Event{}, fail(AttrMetadata, fmt.Sprintf("is of type %s, want M", m.Kind))
		}
		e.Metadata = m.Map
	}
	if e.Timestamp, err = str(AttrTimestamp); err != nil {
		return abi.Event{}, err
	}
	return e, nil
}

// ErrKeyMismatch is the underlying error of a *DecodeError for an item
// whose key is not the one the layout derives from its stream id and
// version.
var ErrKeyMismatch = errors.New("the event item's key is not its stream id's and version's")

// keyPrefixes are the parts of a stream's event keys that do not depend
// on the stream id or the version, cased: computed once per stream.
type keyPrefixes struct {
	pk string // PK(stream, "") : "$<schema>#v<n>#<stream>#"
	sk string // SKPrefix(stream)
}

func (l Layout) prefixes(stream string) keyPrefixes {
	return keyPrefixes{pk: l.cased(l.prefix() + stream + IDSeparator), sk: l.SKPrefix(stream)}
}

// keyMismatch compares an event item's key with the one the layout derives
// from the stream, the stream id and the version the item holds: "" when
// they agree, else the key attribute at fault and what is wrong, naming
// both values. An item whose key agrees costs no allocation.
func (l Layout) keyMismatch(stream string, pre keyPrefixes, item abi.Item, streamID string, version uint64) (attr, problem string) {
	pk, hasPK := item[l.PKName()]
	sk, hasSK := item[l.SKName()]
	if pk.Kind == abi.KindS && sk.Kind == abi.KindS && l.pkIs(pk.Str, pre, stream, streamID) && skIs(sk.Str, pre, version) {
		return "", ""
	}
	check := func(name string, v abi.Value, ok bool, want, from string) bool {
		switch {
		case !ok:
			attr, problem = name, fmt.Sprintf("is missing; %s gives %q", from, want)
		case v.Kind != abi.KindS:
			attr, problem = name, fmt.Sprintf("is of type %s; %s gives the string %q", v.Kind, from, want)
		case v.Str != want:
			attr, problem = name, fmt.Sprintf("is %q, but %s gives %q", v.Str, from, want)
		default:
			return true
		}
		return false
	}
	if check(l.PKName(), pk, hasPK, l.PK(stream, streamID), fmt.Sprintf("%s %q", AttrStreamID, streamID)) {
		check(l.SKName(), sk, hasSK, l.SK(stream, version), fmt.Sprintf("%s %d", AttrVersion, version))
	}
	return attr, problem
}

// pkIs reports whether got is PK(stream, streamID), building it only for
// a stream id that is not ASCII.
func (l Layout) pkIs(got string, pre keyPrefixes, stream, streamID string) bool {
	if !strings.HasPrefix(got, pre.pk) {
		return false
	}
	rest := got[len(pre.pk):]
	if len(rest) != len(streamID) {
		return l.Casing != CasingPreserve && !isASCII(streamID) && got == l.PK(stream, streamID)
	}
	for i := 0; i < len(streamID); i++ {
		c := streamID[i]
		if c >= utf8.RuneSelf {
			return got == l.PK(stream, streamID)
		}
		switch {
		case l.Casing == CasingLower && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case l.Casing == CasingUpper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		if rest[i] != c {
			return false
		}
	}
	return true
}

// skIs reports whether got is SK(stream, version).
func skIs(got string, pre keyPrefixes, version uint64) bool {
	if len(got) != len(pre.sk)+10 || !strings.HasPrefix(got, pre.sk) {
		return false
	}
	v := version
	for i := len(got) - 1; i >= len(pre.sk); i-- {
		if got[i] != byte('0'+v%10) {
			return false
		}
		v /= 10
	}
	return v == 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// CheckKey reports, as a *DecodeError, an item marked as an event of
// stream s whose streamId or version does not read, or whose key is not the
// one the layout derives from them (ErrKeyMismatch): what a scan of the
// event table that reads only these attributes can check.
func (l Layout) CheckKey(s Stream, item abi.Item) error {
	fail := func(attr, problem, hint string, err error) error {
		return &DecodeError{Stream: s.Name, PK: item[l.PKName()].Str, SK: item[l.SKName()].Str,
			Attribute: attr, Problem: problem, Hint: hint, Err: err}
	}
	id := item[AttrStreamID]
	if id.Kind != abi.KindS || id.Str == "" {
		return fail(AttrStreamID, "is missing, empty or not a string", decodeHint, nil)
	}
	v := item[AttrVersion]
	n, err := strconv.ParseUint(v.Str, 10, 64)
	if v.Kind != abi.KindN || err != nil || n == 0 || n > MaxVersion {
		return fail(AttrVersion, fmt.Sprintf("is %s %q, want an integer from 1 to %d", v.Kind, v.Str, uint64(MaxVersion)), decodeHint, nil)
	}
	if attr, problem := l.keyMismatch(s.Name, l.prefixes(s.Name), item, id.Str, n); attr != "" {
		return fail(attr, problem, keyHint, ErrKeyMismatch)
	}
	return nil
}
