package abi

// Version of the ABI this package describes. A host refuses a module whose
// major version it does not know; minor versions only add optional fields.
const (
	VersionMajor = 1
	VersionMinor = 2
)

// Event is one decoded event of a stream, as the host hands it to a plugin.
type Event struct {
	Stream    string // the stream's name, e.g. "Order"
	StreamID  string // the stream instance: its composites joined with '#'
	Version   uint64 // the stream version, from 1
	Type      string // the event type (the data's _tag)
	Data      Item   // the event's data (with _tag)
	Metadata  Item   // optional metadata; nil when absent
	Timestamp string // ISO-8601, as stored
}

// TestTimestamp is the timestamp a test event gets when it names none: the
// events of sdk-guest/guesttest and the fixtures of `host plugin test` and
// the hot-swap smoke test, so a case folds alike natively and in the host.
const TestTimestamp = "2026-01-01T00:00:00Z"

// Capability names an optional export of a plugin.
type Capability = string

// The capabilities a plugin can export. Describe, Key and Evolve are required.
const (
	CapDescribe Capability = "describe"
	CapKey      Capability = "key"
	CapInitial  Capability = "initial"
	CapEvolve   Capability = "evolve"
	CapTerminal Capability = "terminal"
	CapToItem   Capability = "to_item"
	CapEffects  Capability = "effects"
	CapSelfTest Capability = "self_test"
)

// Source modes.
const (
	ModeFold   = "fold"
	ModeLatest = "latest"
)

// SourceDesc describes one source of a projection: the stream it reads.
// A single-source projection has exactly one source.
type SourceDesc struct {
	Name       string   // the source's name, unique within the plugin
	Stream     string   // the stream it reads, e.g. "Order"
	EventTypes []string // the event types it folds
	Mode       string   // ModeFold (default) or ModeLatest
}

// Description is what a plugin's describe export returns.
type Description struct {
	Name         string       // the plugin's name
	Version      string       // the plugin's own version
	ABIMajor     uint32       // the ABI version the plugin was built for
	ABIMinor     uint32       //
	Sources      []SourceDesc // the streams and event types it reads
	Capabilities []Capability // the exports it provides
	// Composites (ABI 1.2, optional) declares, per source, the fields the
	// plugin splits its stream's ids into; the host refuses a plugin whose
	// declaration differs from the stream's configured composite.
	Composites []SourceComposite
}

// SourceComposite is the composite a plugin declares for a source's
// stream ids: the stream id is Fields' values joined with '#'.
type SourceComposite struct {
	Source string   // a source's name (SourceDesc.Name)
	Fields []string // the composite fields, in order
}

// Has reports whether the description lists capability c.
func (d Description) Has(c Capability) bool {
	for _, x := range d.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// KeyRequest asks which row each event folds into.
type KeyRequest struct {
	Source string  // the source the events are read by
	Events []Event // events of the source's stream
}

// KeyResult is the row one event addresses. A nil Key is "none": the event is
// acknowledged and ignored. Error is set when the plugin's key failed.
type KeyResult struct {
	Key   Item // the row's primary key attributes as stored; nil for none
	Error *Error
}

// KeyResponse holds one KeyResult per requested event, in order.
type KeyResponse struct {
	Keys []KeyResult
}

// SourcedEvent is an event together with the source that reads it.
type SourcedEvent struct {
	Source string
	Event  Event
}

// EvolveRequest folds one row's run of events in a single call. The
// events are in fold order: sources in declaration order,
// then stream id, then version.
type EvolveRequest struct {
	Key      Item           // the row's key, as returned by key
	StreamID string         // single-source: the stream instance (for initial and to_item)
	State    Item           // the row as read; nil when it does not exist or is a tombstone
	Events   []SourcedEvent // the run to fold
	// OmitState (ABI 1.1) tells the plugin that the caller needs only
	// whether the state exists after the run, not its attributes: a plugin
	// may then answer a present state as an empty item. The engine sets it
	// (it stores Item, never State); a 1.0 plugin ignores it and sends the
	// whole state, which is equally valid.
	OmitState bool
}

// Outcome is what evolve decided for one event.
type Outcome uint8

// The outcomes of one event of a run.
const (
	Applied  Outcome = iota + 1 // evolve returned a new state (or removeRow)
	Skipped                     // evolve returned skip: the row is left alone
	Rejected                    // evolve failed and terminal accepted the error
	Failed                      // evolve failed and terminal did not accept it
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Skipped:
		return "skipped"
	case Rejected:
		return "rejected"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Error is a typed error raised by plugin code: Tag names its type (e.g.
// "ZoneNotPlaced"), Message says what happened.
type Error struct {
	Tag     string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Tag
	}
	return e.Tag + ": " + e.Message
}

// Decision is the outcome of one event of a run.
type Decision struct {
	Outcome Outcome
	Remove  bool    // Applied with removeRow: the row becomes a tombstone
	Error   *Error  // Rejected and Failed: the error evolve returned
	Effects []Value // Applied: the outbox effects the event produces
}

// EvolveResponse is the result of folding a run.
type EvolveResponse struct {
	// State is the row's state after the run; nil when the row does not
	// exist after it (never created, only rejected or skipped, or removed).
	// When the request set OmitState it may be an empty, non-nil Item: the
	// row exists, its attributes were not sent.
	State Item
	// Removed is set when the run ended with removeRow.
	Removed bool
	// Item is to_item(State, {streamId, key}) when State is not nil.
	Item Item
	// Decisions has one entry per event evaluated, in request order. The
	// run stops after the first Failed decision, so it may be shorter than
	// the request's Events.
	Decisions []Decision
}
