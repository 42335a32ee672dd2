package guest

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// Projection is a single-source projection: one stream folded into rows of
// state S. Key, Initial and Evolve are required.
type Projection[S any] struct {
	Name       string   // the plugin's name
	Version    string   // the plugin's own version
	Stream     string   // the stream it reads, e.g. "Order"
	EventTypes []string // the event types it folds
	// Composite names the fields of the stream's id, as the host's
	// configuration does (e.g. ["tenantId", "orderId"]): Event.StreamKey
	// and the contexts' StreamKey split stream ids by them. Optional.
	Composite []string

	// Key names the row an event folds into; false: none (the event is
	// acknowledged and ignored).
	Key func(streamID string, e Event) (Key, bool)
	// Initial is the state of a row that does not exist yet, before e.
	Initial func(streamID string, e Event) S
	// Evolve returns the next state, or an error: Skip, RemoveRow, or a
	// domain error (rejected when Terminal accepts it, else the row fails).
	Evolve func(s S, e Event) (S, error)
	// Terminal reports whether an evolve error rejects its event. Nil
	// accepts none.
	Terminal func(err error) bool
	// ToItem maps the state to the stored item: a struct, a map[string]T or
	// an abi.Item. Nil stores the state as it maps.
	ToItem func(s S, ctx ItemContext) any
	// Effects returns the outbox effects of an applied event; next is nil
	// when the event removed the row. Each effect maps like state.
	Effects func(e Event, next *S, ctx EffectContext) []any
}

// Source is one source of a MultiProjection.
type Source[S any] struct {
	Name       string // unique within the projection
	Stream     string
	EventTypes []string
	Mode       string   // abi.ModeFold (default) or abi.ModeLatest
	Composite  []string // the stream id's fields, as Projection.Composite
	Key        func(streamID string, e Event) (Key, bool)
	Evolve     func(s S, e Event, ctx SourceContext) (S, error)
	Terminal   func(err error) bool
}

// MultiProjection is a projection whose rows several sources contribute to.
// Initial starts a row from its key.
type MultiProjection[S any] struct {
	Name    string
	Version string
	Sources []Source[S]
	Initial func(key Key) S
	ToItem  func(s S, ctx ItemContext) any
	Effects func(e Event, next *S, ctx EffectContext) []any
}

// Definition is a Projection or a MultiProjection, ready to be built.
type Definition interface {
	build() (runner, error)
}

type source[S any] struct {
	desc     abi.SourceDesc
	key      func(streamID string, e Event) (Key, bool)
	evolve   func(s S, e Event, ctx SourceContext) (S, error)
	evolve1  func(s S, e Event) (S, error) // single-source: Evolve, called directly
	terminal func(err error) bool
	comp     composite // declared composite fields; nil: none
}

// compOf returns the shared composite of names (nil when none).
func compOf(names []string) composite {
	if len(names) == 0 {
		return nil
	}
	c := append([]string(nil), names...)
	return &c
}

// core is the fold of a projection of state S, single- or multi-source.
type core[S any] struct {
	name, version string
	single        bool
	sources       []source[S]
	initSingle    func(streamID string, e Event) S
	initMulti     func(key Key) S
	toItem        func(s S, ctx ItemContext) any
	effects       func(e Event, next *S, ctx EffectContext) []any
	state         *codec
	// headWord is how the first source's name starts an event, its length
	// byte and its bytes, as a little-endian word when that fits in one,
	// and headMask the bits it fills; otherwise headWord 1 and headMask 0,
	// which never match.
	headWord, headMask uint64
}

func (p Projection[S]) build() (runner, error) {
	if p.Key == nil || p.Initial == nil || p.Evolve == nil {
		return nil, fmt.Errorf("guest: projection %q needs Key, Initial and Evolve", p.Name)
	}
	ev := p.Evolve
	c := &core[S]{name: p.Name, version: p.Version, single: true, initSingle: p.Initial,
		toItem: p.ToItem, effects: p.Effects}
	c.sources = []source[S]{{
		desc:     abi.SourceDesc{Name: p.Stream, Stream: p.Stream, EventTypes: p.EventTypes, Mode: abi.ModeFold},
		key:      p.Key,
		evolve:   func(s S, e Event, _ SourceContext) (S, error) { return ev(s, e) },
		evolve1:  ev,
		terminal: p.Terminal,
		comp:     compOf(p.Composite),
	}}
	return c, c.init()
}

func (p MultiProjection[S]) build() (runner, error) {
	if p.Initial == nil || len(p.Sources) == 0 {
		return nil, fmt.Errorf("guest: projection %q needs Initial and at least one source", p.Name)
	}
	c := &core[S]{name: p.Name, version: p.Version, initMulti: p.Initial, toItem: p.ToItem, effects: p.Effects}
	seen := map[string]bool{}
	for _, s := range p.Sources {
		if s.Key == nil || s.Evolve == nil || s.Name == "" || seen[s.Name] {
			return nil, fmt.Errorf("guest: projection %q: source %q needs a unique name, Key and Evolve", p.Name, s.Name)
		}
		seen[s.Name] = true
		mode := s.Mode
		if mode == "" {
			mode = abi.ModeFold
		}
		c.sources = append(c.sources, source[S]{
			desc: abi.SourceDesc{Name: s.Name, Stream: s.Stream, EventTypes: s.EventTypes, Mode: mode},
			key:  s.Key, evolve: s.Evolve, terminal: s.Terminal, comp: compOf(s.Composite),
		})
	}
	return c, c.init()
}

func (c *core[S]) init() error {
	t := reflect.TypeFor[S]()
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("guest: projection %q: state %s must be a struct", c.name, t)
	}
	c.state = codecFor(t)
	c.headWord, c.headMask = 1, 0
	if name := c.sources[0].desc.Name; len(name) <= 7 {
		c.headWord, c.headMask = 0, 0
		for i := len(name) - 1; i >= 0; i-- {
			c.headWord = c.headWord<<8 | uint64(name[i])
			c.headMask = c.headMask<<8 | 0xff
		}
		c.headWord = c.headWord<<8 | uint64(len(name))
		c.headMask = c.headMask<<8 | 0xff
	}
	return nil
}

func (c *core[S]) description() abi.Description {
	d := abi.Description{Name: c.name, Version: c.version, ABIMajor: abi.VersionMajor, ABIMinor: abi.VersionMinor,
		Capabilities: []abi.Capability{abi.CapDescribe, abi.CapKey, abi.CapEvolve, abi.CapInitial,
			abi.CapTerminal, abi.CapToItem, abi.CapEffects}}
	for _, s := range c.sources {
		d.Sources = append(d.Sources, s.desc)
		if s.comp != nil {
			d.Composites = append(d.Composites, abi.SourceComposite{Source: s.desc.Name, Fields: *s.comp})
		}
	}
	return d
}

// source returns the source named name; a single-source projection also
// answers to "".
func (c *core[S]) source(name string) (*source[S], error) {
	if c.single && (name == "" || name == c.sources[0].desc.Name) {
		return &c.sources[0], nil
	}
	for i := range c.sources {
		if c.sources[i].desc.Name == name {
			return &c.sources[i], nil
		}
	}
	if c.single && name == "" {
		return &c.sources[0], nil
	}
	return nil, fmt.Errorf("guest: projection %q has no source %q", c.name, name)
}

// decodeState and appendState hide s from escape analysis so that a fold's
// state can live on the stack; s stays live in the caller, and the codecs
// keep no reference to it.
func (c *core[S]) decodeState(raw string, s *S) error {
	return decodeOptItem(raw, c.state, noescape(unsafe.Pointer(s)))
}

func (c *core[S]) appendState(dst []byte, s *S) ([]byte, error) {
	return encodeOptItem(dst, c.state, noescape(unsafe.Pointer(s)))
}

// appendItem appends to_item(s) as an optional item.
func (c *core[S]) appendItem(dst []byte, s *S, ctx ItemContext) (out []byte, err error) {
	if c.toItem == nil {
		return c.appendState(dst, s)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = dst, fmt.Errorf("guest: to_item panicked: %v", r)
		}
	}()
	return appendOptItemOf(dst, c.toItem(*s, ctx))
}

// appendEffects appends the effects of an applied event: count, values.
func (c *core[S]) appendEffects(dst []byte, e Event, next *S, ctx EffectContext) ([]byte, error) {
	if c.effects == nil {
		return append(dst, 0), nil
	}
	fx := c.effects(e, next, ctx)
	dst = abi.AppendUvarint(dst, uint64(len(fx)))
	var err error
	for _, x := range fx {
		if dst, err = appendValueOf(dst, x); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
