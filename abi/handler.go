package abi

// Handler is a projection's logic, in process: what the guest SDK builds and
// the host's native runtime calls. Its methods are the required exports of a
// Wasm plugin (describe, key, evolve) with the messages decoded.
type Handler interface {
	Describe() Description
	Key(*KeyRequest) (*KeyResponse, error)
	Evolve(*EvolveRequest) (*EvolveResponse, error)
}

// PartsHandler is implemented by a Handler that also offers the optional
// exports one by one (initial, terminal, to_item, effects, self_test): what
// plugins written without the Go SDK may need and `host plugin test` calls.
type PartsHandler interface {
	Handler
	Initial(*InitialRequest) (*InitialResponse, error)
	Terminal(*TerminalRequest) (*TerminalResponse, error)
	ToItem(*ToItemRequest) (*ToItemResponse, error)
	Effects(*EffectsRequest) (*EffectsResponse, error)
	SelfTest() (*SelfTestResponse, error)
}

// InitialRequest asks for the state a row starts from (export initial).
// Single-source: initial(streamId, event); multi-source: initial(key).
type InitialRequest struct {
	Source   string // the source of Event
	StreamID string // the event's stream instance
	Key      Item   // the row's key
	Event    *Event // the first event folded into the row; nil for multi-source
}

// InitialResponse holds the initial state, as the row's attributes.
type InitialResponse struct {
	State Item
}

// TerminalRequest asks whether an evolve error rejects its event (export
// terminal).
type TerminalRequest struct {
	Source string
	Error  Error
}

// TerminalResponse says whether the error is terminal: true rejects the
// event, false fails the row (or the source instance).
type TerminalResponse struct {
	Accept bool
}

// ToItemRequest asks for the stored item of a state (export to_item).
type ToItemRequest struct {
	State    Item
	StreamID string
	Key      Item
}

// ToItemResponse holds the item to store (without key, checkpoints,
// revision or createdAt, which the host sets).
type ToItemResponse struct {
	Item Item
}

// EffectsRequest asks for the outbox effects of an applied event (export
// effects). Next is nil when the event removed the row.
type EffectsRequest struct {
	Source   string
	StreamID string
	Key      Item
	Event    Event
	Next     Item
}

// EffectsResponse holds the effects, in order.
type EffectsResponse struct {
	Effects []Value
}

// SelfTestResponse is the result of a plugin's own tests (export
// self_test): one message per failure, none when every test passed.
type SelfTestResponse struct {
	Failures []string
}
