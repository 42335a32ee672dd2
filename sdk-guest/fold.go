package guest

import (
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// runner is a built projection, working on encoded messages: each method
// decodes a request from in and appends the encoded response to out. An
// error is a guest-level failure (status 1), not a domain error.
type runner interface {
	description() abi.Description
	key(in string, out []byte) ([]byte, error)
	evolve(in string, out []byte) ([]byte, error)
	initial(in string, out []byte) ([]byte, error)
	terminal(in string, out []byte) ([]byte, error)
	toItemCall(in string, out []byte) ([]byte, error)
	effectsCall(in string, out []byte) ([]byte, error)
}

// readEvent reads an abi Event, keeping its data and metadata encoded.
func readEvent(r *abi.Reader, e *Event) {
	var ok bool
	if e.Stream, ok = r.ShortString(); !ok {
		e.Stream = r.String()
	}
	if e.StreamID, ok = r.ShortString(); !ok {
		e.StreamID = r.String()
	}
	if e.Version, ok = r.SmallUvarint(); !ok {
		e.Version = r.Uvarint()
	}
	if e.Type, ok = r.ShortString(); !ok {
		e.Type = r.String()
	}
	if e.data, ok = r.Sized(); !ok {
		e.data = r.Raw(int(r.Fixed32()))
	}
	if e.meta, ok = r.Sized(); !ok {
		e.meta = r.Raw(int(r.Fixed32()))
	}
	if e.Timestamp, ok = r.ShortString(); !ok {
		e.Timestamp = r.String()
	}
}

func (c *core[S]) key(in string, out []byte) ([]byte, error) {
	var r abi.Reader
	r.Reset(in)
	src, err := c.source(r.String())
	if err != nil {
		return out, err
	}
	n := r.Count(12)
	out = abi.AppendUvarint(out, uint64(n))
	var e Event
	for i := 0; i < n && r.Err() == nil; i++ {
		readEvent(&r, &e)
		if r.Err() != nil {
			break
		}
		e.comp = src.comp
		k, ok, perr := callKey(src, e)
		switch {
		case perr != nil:
			out = append(out, 0)
			out = abi.AppendOptError(out, perr)
		case !ok || k == nil:
			out = append(out, 0, 0)
		default:
			out = abi.AppendOptItem(out, k)
			out = append(out, 0)
		}
	}
	if err := r.Err(); err != nil {
		return out, fmt.Errorf("guest: key request: %w", err)
	}
	return out, nil
}

func callKey[S any](src *source[S], e Event) (k Key, ok bool, perr *abi.Error) {
	defer func() {
		if r := recover(); r != nil {
			perr = panicError(r)
		}
	}()
	k, ok = src.key(e.StreamID, e)
	return k, ok, nil
}

func panicError(r any) *abi.Error {
	return &abi.Error{Tag: "Panic", Message: fmt.Sprint(r)}
}

// evolve folds the run as it reads it: each event is decoded, folded and
// dropped, and its decision written to out, so a run allocates nothing per
// event.
func (c *core[S]) evolve(in string, out []byte) ([]byte, error) {
	var r abi.Reader
	r.Reset(in)
	var f fold[S] // declared, not a literal: no copy of two states
	f.c, f.end = c, -1
	f.key.raw, _ = r.Sized()
	if !c.single {
		k := f.key.get()
		f.key.decoded = &k
	}
	streamID := r.String()
	stateRaw, _ := r.Sized()
	present := len(stateRaw) > 0 && stateRaw[0] != 0
	n := r.Count(13)
	if len(f.key.raw) == 0 || len(stateRaw) == 0 {
		r.Fail("evolve request: key or state missing")
	}
	if err := r.Err(); err != nil {
		return out, fmt.Errorf("guest: evolve request: %w", err)
	}
	f.present = present
	if present {
		if err := c.decodeState(stateRaw, &f.st[0]); err != nil {
			return out, fmt.Errorf("guest: state as read: %w", stateDataError(err))
		}
	}
	f.dst = out
	if err := f.run(in, r.Offset(), n, &streamID); err != nil {
		return out, err
	}
	out = append(f.dst, 0) // ends the decisions
	// ABI 1.1: after the events, an optional flags byte. A host that only
	// needs to know whether the state exists gets an empty item for it.
	omit := f.end >= 0 && f.end < len(in) && in[f.end]&abi.EvolveFlagOmitState != 0
	var err error
	if f.present && omit {
		out = append(out, 1) // present, no attributes
	} else if f.present {
		if out, err = c.appendState(out, &f.st[f.at]); err != nil {
			return out, fmt.Errorf("guest: state: %w", err)
		}
	} else {
		out = append(out, 0)
	}
	out = abi.AppendBool(out, f.removed && !f.present)
	if f.present {
		if out, err = c.appendItem(out, &f.st[f.at], ItemContext{StreamID: streamID, key: f.key, comp: c.sources[0].comp}); err != nil {
			return out, fmt.Errorf("guest: to_item: %w", err)
		}
	} else {
		out = append(out, 0)
	}
	return out, nil
}

// fold is the state of one run: the row's state, whether it exists, and the
// decisions encoded so far.
type fold[S any] struct {
	c       *core[S]
	key     lazyKey
	st      [2]S // st[at] is the state; the next one is written to the other
	at      int
	present bool
	removed bool
	dst     []byte
	end     int // the offset after the last event once all were read, else -1
}

// run reads and folds the run's n events, which start at offset o of in,
// stopping after a Failed one. A panic in domain code becomes a Failed
// decision tagged "Panic" for the event being folded (one deferred recover
// serves the whole run, as a Failed decision ends it anyway); err is a
// guest-level failure.
//
// Events that take the common step are folded by runCommon, in a loop of
// their own; the others here, one at a time. Both read events inline with
// local offsets (scan.go), the general reader taking over for an event with
// long strings or a large version.
func (f *fold[S]) run(in string, o int, n int, streamID *string) (err error) {
	start := len(f.dst)
	defer func() {
		if p := recover(); p != nil {
			f.dst = append(f.dst[:start], byte(abi.Failed), 0)
			f.dst = abi.AppendOptError(f.dst, panicError(p))
			f.dst = append(f.dst, 0)
			err = nil
		}
	}()
	c := f.c
	common := c.single && c.sources[0].evolve1 != nil && c.effects == nil
	var e Event
	for i := 0; i < n; i++ {
		if common && f.present && *streamID != "" {
			k, next, stop := f.runCommon(in, o, n-i, &start)
			i, o = i+k, next
			if stop {
				if i == n {
					f.end = o
				}
				return nil
			}
			if i == n {
				break
			}
		}
		at := o
		var name string
		name, o = shortStr(in, o)
		e.Stream, o = shortStr(in, o)
		e.StreamID, o = shortStr(in, o)
		e.Version, o = smallVarint(in, o)
		e.Type, o = shortStr(in, o)
		e.data, o = sized(in, o)
		e.meta, o = sized(in, o)
		e.Timestamp, o = shortStr(in, o)
		src := &c.sources[0]
		if o < 0 || !c.single || at+8 > len(in) || le64(in, at)&c.headMask != c.headWord {
			if src, o, err = f.source(in, at, o, name, &e); err != nil {
				return err
			}
		}
		if *streamID == "" {
			*streamID = e.StreamID
		}
		e.comp = src.comp
		start = len(f.dst)
		outcome, err := f.step(src, &e)
		if err != nil || outcome == abi.Failed {
			if err == nil && i == n-1 {
				f.end = o
			}
			return err
		}
	}
	f.end = o
	return nil
}

// runCommon folds, from offset o of in, up to max events that take the
// common step: read inline, from the projection's one source, into a row
// that exists, without effects. It returns how many it decided, the offset
// after them, and whether the last one Failed (which ends the run). It
// stops before any other event, and after one that removed the row, for
// run to go on with.
//
// It is a loop of its own, with as few values live across an iteration as
// possible: in a Wasm guest compiled by Go every branch goes through the
// function's dispatch loop, and a small function is several times cheaper
// per event than the general one (docs/BENCHMARKS.md).
func (f *fold[S]) runCommon(in string, o, max int, start *int) (k, next int, failed bool) {
	c := f.c
	src := &c.sources[0]
	evolve := src.evolve1
	var e Event
	e.comp = src.comp
	for k < max {
		at := o
		_, o = shortStr(in, o)
		e.Stream, o = shortStr(in, o)
		e.StreamID, o = shortStr(in, o)
		e.Version, o = smallVarint(in, o)
		e.Type, o = shortStr(in, o)
		e.data, o = sized(in, o)
		e.meta, o = sized(in, o)
		e.Timestamp, o = shortStr(in, o)
		if o < 0 || at+8 > len(in) || le64(in, at)&c.headMask != c.headWord {
			return k, at, false // not read inline, or another source
		}
		*start = len(f.dst)
		k++
		var evErr error
		f.st[1-f.at], evErr = evolve(f.st[f.at], e)
		if evErr == nil {
			f.dst = append(f.dst, byte(abi.Applied), 0, 0, 0)
			f.at, f.removed = 1-f.at, false
			continue
		}
		outcome, _ := f.settle(src, &e, evErr) // no effects: no error
		if outcome == abi.Failed || !f.present {
			return k, o, outcome == abi.Failed
		}
	}
	return k, o, false
}

// source returns the source of the event at offset at of in, by name, and
// the offset after the event, reading it with the general reader when the
// inline one could not (o < 0).
func (f *fold[S]) source(in string, at, o int, name string, e *Event) (*source[S], int, error) {
	c := f.c
	if o < 0 {
		var r abi.Reader
		r.Reset(in)
		r.Raw(at)
		name = r.String()
		readEvent(&r, e)
		if err := r.Err(); err != nil {
			return nil, o, fmt.Errorf("guest: evolve request: %w", err)
		}
		o = r.Offset()
	}
	src, err := c.source(name)
	return src, o, err
}

// step folds one event, appending its Decision; err is a guest-level
// failure (an effect that cannot be encoded).
func (f *fold[S]) step(src *source[S], e *Event) (o abi.Outcome, err error) {
	c := f.c
	var evErr error
	// Evolve reads the state from one slot and its result lands in the
	// other, so that the state is copied once per event (Go's Wasm port
	// copies anything over 16 bytes with a call out of the module).
	cur, next := &f.st[f.at], &f.st[1-f.at]
	if !f.present {
		if c.single {
			*cur = c.initSingle(e.StreamID, *e)
		} else {
			*cur = c.initMulti(*f.key.decoded)
		}
	}
	if src.evolve1 != nil {
		*next, evErr = src.evolve1(*cur, *e)
	} else {
		*next, evErr = src.evolve(*cur, *e, SourceContext{Source: src.desc.Name, StreamID: e.StreamID, comp: src.comp})
	}
	return f.settle(src, e, evErr)
}

// settle appends the decision of an event that evolve folded into the
// other state slot, with error evErr, and makes that slot the state when
// the event applied.
func (f *fold[S]) settle(src *source[S], e *Event, evErr error) (o abi.Outcome, err error) {
	c := f.c
	switch {
	case evErr == nil:
		f.dst = append(f.dst, byte(abi.Applied), 0, 0)
		if c.effects == nil {
			f.dst = append(f.dst, 0)
		} else if f.dst, err = c.appendEffects(f.dst, *e, escape(f.st[1-f.at]), f.effectContext(src, e)); err != nil {
			return 0, fmt.Errorf("guest: effects of %s v%d: %w", e.StreamID, e.Version, err)
		}
		f.at, f.present, f.removed = 1-f.at, true, false
		return abi.Applied, nil
	case evErr == Skip || errors.Is(evErr, Skip):
		f.dst = append(f.dst, byte(abi.Skipped), 0, 0, 0)
		return abi.Skipped, nil
	case evErr == RemoveRow || errors.Is(evErr, RemoveRow):
		f.dst = append(f.dst, byte(abi.Applied), 1, 0)
		if c.effects == nil {
			f.dst = append(f.dst, 0)
		} else if f.dst, err = c.appendEffects(f.dst, *e, nil, f.effectContext(src, e)); err != nil {
			return 0, fmt.Errorf("guest: effects of %s v%d: %w", e.StreamID, e.Version, err)
		}
		f.present, f.removed = false, true
		return abi.Applied, nil
	}
	o = abi.Failed
	if t := src.terminal; t != nil && t(evErr) {
		o = abi.Rejected
	}
	f.dst = append(f.dst, byte(o), 0)
	f.dst = abi.AppendOptError(f.dst, toABIError(evErr))
	f.dst = append(f.dst, 0)
	return o, nil
}

func (f *fold[S]) effectContext(src *source[S], e *Event) EffectContext {
	return EffectContext{Source: src.desc.Name, StreamID: e.StreamID, key: f.key, comp: src.comp}
}

// escape returns a pointer to a heap copy of s, so that only projections
// with effects pay for one.
func escape[S any](s S) *S { return &s }
