package guest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
)

// The optional exports, one domain function each (for hosts and tools that
// call them separately, e.g. `host plugin test`).

func (c *core[S]) initial(in string, out []byte) ([]byte, error) {
	q, err := abi.DecodeInitialRequest([]byte(in))
	if err != nil {
		return out, err
	}
	var s S
	if c.single {
		if q.Event == nil {
			return out, fmt.Errorf("guest: initial of a single-source projection needs the event")
		}
		ev := NewEvent(*q.Event)
		ev.comp = c.sources[0].comp
		s = c.initSingle(q.StreamID, ev)
	} else {
		s = c.initMulti(q.Key)
	}
	return c.appendState(out, &s)
}

func (c *core[S]) terminal(in string, out []byte) ([]byte, error) {
	q, err := abi.DecodeTerminalRequest([]byte(in))
	if err != nil {
		return out, err
	}
	src, err := c.source(q.Source)
	if err != nil {
		return out, err
	}
	e := q.Error
	return abi.AppendBool(out, src.terminal != nil && src.terminal(&e)), nil
}

func (c *core[S]) toItemCall(in string, out []byte) ([]byte, error) {
	q, err := abi.DecodeToItemRequest([]byte(in))
	if err != nil {
		return out, err
	}
	if q.State == nil {
		return append(out, 0), nil
	}
	var s S
	if err := c.decodeState(string(abi.AppendOptItem(nil, q.State)), &s); err != nil {
		return out, err
	}
	return c.appendItem(out, &s, ItemContext{StreamID: q.StreamID, key: newLazyKey(q.Key), comp: c.sources[0].comp})
}

func (c *core[S]) effectsCall(in string, out []byte) ([]byte, error) {
	q, err := abi.DecodeEffectsRequest([]byte(in))
	if err != nil {
		return out, err
	}
	var next *S
	if q.Next != nil {
		next = new(S)
		if err := c.decodeState(string(abi.AppendOptItem(nil, q.Next)), next); err != nil {
			return out, err
		}
	}
	ev := NewEvent(q.Event)
	var comp composite
	if src, err := c.source(q.Source); err == nil {
		comp = src.comp
	}
	ev.comp = comp
	return c.appendEffects(out, ev, next, EffectContext{Source: q.Source, StreamID: q.StreamID, key: newLazyKey(q.Key), comp: comp})
}

// Plugin is a built projection. It implements abi.Handler and
// abi.PartsHandler (run in process by host/logic.Native) and answers the
// ABI's exports on encoded messages (Call), which the Wasm glue uses.
type Plugin struct {
	r    runner
	desc abi.Description
}

// New builds a Projection or MultiProjection into a Plugin.
func New(d Definition) (*Plugin, error) {
	r, err := d.build()
	if err != nil {
		return nil, err
	}
	return &Plugin{r: r, desc: r.description()}, nil
}

// MustNew is New panicking on an invalid definition.
func MustNew(d Definition) *Plugin {
	p, err := New(d)
	if err != nil {
		panic(err)
	}
	return p
}

// CallError is a guest-level failure of an export: a request that does not
// decode, an unknown source, a panic outside domain code's per-event calls,
// a value that cannot be encoded. On the Wasm ABI it is status 1.
type CallError struct {
	Export string
	Err    error
}

// Error implements error.
func (e *CallError) Error() string { return e.Export + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

// Call runs the export named export (describe, key, evolve, initial,
// terminal, to_item, effects) on the encoded request in, appending the
// encoded response to out. in must not change until Call returns, and
// decoded strings may alias it.
func (p *Plugin) Call(export string, in string, out []byte) (res []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = out, &CallError{Export: export, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	var f func(string, []byte) ([]byte, error)
	switch export {
	case abi.CapDescribe:
		d := p.Describe()
		return abi.AppendDescription(out, &d), nil
	case abi.CapKey:
		f = p.r.key
	case abi.CapEvolve:
		f = p.r.evolve
	case abi.CapInitial:
		f = p.r.initial
	case abi.CapTerminal:
		f = p.r.terminal
	case abi.CapToItem:
		f = p.r.toItemCall
	case abi.CapEffects:
		f = p.r.effectsCall
	default:
		return out, &CallError{Export: export, Err: fmt.Errorf("no such export")}
	}
	res, err = f(in, out)
	if err != nil {
		return out, &CallError{Export: export, Err: err}
	}
	return res, nil
}

// callBufs recycles the buffers of the in-process calls (call): the
// request is encoded into one and handed to the guest as a string of its
// own (domain code may keep what it decodes from its input, as it always
// could in process), the response is appended to another, which abi's
// decoders copy. A buffer is kept only up to maxCallBuf bytes.
var callBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxCallBuf is the largest buffer callBufs keeps: a rare large request
// does not stay in memory.
const maxCallBuf = 64 << 10

func call[Q, P any](p *Plugin, export string, q *Q, enc func([]byte, *Q) []byte, dec func([]byte) (*P, error)) (*P, error) {
	qb, rb := callBufs.Get().(*[]byte), callBufs.Get().(*[]byte)
	*qb = enc((*qb)[:0], q)
	in := string(*qb)
	putCallBuf(qb)
	out, err := p.Call(export, in, (*rb)[:0])
	if err != nil {
		return nil, err // out may be held by the error: not reused
	}
	resp, err := dec(out)
	*rb = out
	putCallBuf(rb)
	return resp, err
}

func putCallBuf(b *[]byte) {
	if cap(*b) <= maxCallBuf {
		callBufs.Put(b)
	}
}

// Describe returns the plugin's description (with the capabilities
// declared by packages that add exports, see Declare).
func (p *Plugin) Describe() abi.Description {
	d := p.desc
	if extra := declared.Load(); extra != nil {
		d.Capabilities = append(d.Capabilities[:len(d.Capabilities):len(d.Capabilities)], *extra...)
	}
	return d
}

var (
	declareMu sync.Mutex
	declared  atomic.Pointer[[]abi.Capability]
)

// Declare lists capability c in the description of every plugin of this
// process: for packages that add an optional export to the module (the
// selftest package adds self_test). Declaring one twice lists it once.
func Declare(c abi.Capability) {
	declareMu.Lock()
	defer declareMu.Unlock()
	var caps []abi.Capability
	if old := declared.Load(); old != nil {
		caps = append(caps, *old...)
	}
	if slices.Contains(caps, c) {
		return
	}
	caps = append(caps, c)
	declared.Store(&caps)
}

// Key names the row of each event. The keys are decoded as
// abi.DecodeKeyResponse decodes them: a key repeated right after itself
// shares its Item, to be read, not changed.
func (p *Plugin) Key(q *abi.KeyRequest) (*abi.KeyResponse, error) {
	return call(p, abi.CapKey, q, abi.AppendKeyRequest, abi.DecodeKeyResponse)
}

// Evolve folds a row's run of events.
func (p *Plugin) Evolve(q *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	return call(p, abi.CapEvolve, q, abi.AppendEvolveRequest, abi.DecodeEvolveResponse)
}

// Initial returns the initial state of a row.
func (p *Plugin) Initial(q *abi.InitialRequest) (*abi.InitialResponse, error) {
	return call(p, abi.CapInitial, q, abi.AppendInitialRequest, abi.DecodeInitialResponse)
}

// Terminal reports whether an evolve error rejects its event.
func (p *Plugin) Terminal(q *abi.TerminalRequest) (*abi.TerminalResponse, error) {
	return call(p, abi.CapTerminal, q, abi.AppendTerminalRequest, abi.DecodeTerminalResponse)
}

// ToItem maps a state to its stored item.
func (p *Plugin) ToItem(q *abi.ToItemRequest) (*abi.ToItemResponse, error) {
	return call(p, abi.CapToItem, q, abi.AppendToItemRequest, abi.DecodeToItemResponse)
}

// Effects returns the outbox effects of an applied event.
func (p *Plugin) Effects(q *abi.EffectsRequest) (*abi.EffectsResponse, error) {
	return call(p, abi.CapEffects, q, abi.AppendEffectsRequest, abi.DecodeEffectsResponse)
}

// SelfTest reports no failures: the SDK's plugins carry no self tests yet.
func (p *Plugin) SelfTest() (*abi.SelfTestResponse, error) { return &abi.SelfTestResponse{}, nil }

var (
	_ abi.Handler      = (*Plugin)(nil)
	_ abi.PartsHandler = (*Plugin)(nil)
)
