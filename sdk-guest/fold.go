package guest

import (
	"errors"
	"fmt"
	"sync"

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
	e.Stream = r.String()
	e.StreamID = r.String()
	e.Version = r.Uvarint()
	e.Type = r.String()
	e.data, _ = r.RawOptItem()
	e.meta, _ = r.RawOptItem()
	e.Timestamp = r.String()
}

func (c *core[S]) key(in string, out []byte) ([]byte, error) {
	var r abi.Reader
	r.Reset(in)
	src, err := c.source(r.String())
	if err != nil {
		return out, err
	}
	n := r.Count(7)
	out = abi.AppendUvarint(out, uint64(n))
	var e Event
	for i := 0; i < n && r.Err() == nil; i++ {
		readEvent(&r, &e)
		if r.Err() != nil {
			break
		}
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

type sourcedEvent[S any] struct {
	src *source[S]
	e   Event
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (c *core[S]) evolve(in string, out []byte) ([]byte, error) {
	var r abi.Reader
	r.Reset(in)
	key := r.OptItem()
	streamID := r.String()
	stateRaw, present := r.RawOptItem()
	n := r.Count(8)
	events := make([]sourcedEvent[S], n)
	for i := range events {
		src, err := c.source(r.String())
		if err != nil && r.Err() == nil {
			return out, err
		}
		events[i].src = src
		readEvent(&r, &events[i].e)
	}
	if err := r.Err(); err != nil {
		return out, fmt.Errorf("guest: evolve request: %w", err)
	}
	if streamID == "" && n > 0 {
		streamID = events[n-1].e.StreamID
	}
	var st S
	if present {
		if err := c.decodeState(stateRaw, &st); err != nil {
			return out, fmt.Errorf("guest: state as read: %w", err)
		}
	}
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	decisions := (*bp)[:0]
	removed := false
	count := 0
	for i := range events {
		count++
		var o abi.Outcome
		var err error
		decisions, o, err = c.step(decisions, &st, &present, &removed, &events[i], key)
		if err != nil {
			*bp = decisions
			return out, err
		}
		if o == abi.Failed {
			break
		}
	}
	*bp = decisions
	var err error
	if present {
		if out, err = c.appendState(out, &st); err != nil {
			return out, fmt.Errorf("guest: state: %w", err)
		}
	} else {
		out = append(out, 0)
	}
	out = abi.AppendBool(out, removed && !present)
	if present {
		if out, err = c.appendItem(out, &st, ItemContext{StreamID: streamID, Key: key}); err != nil {
			return out, fmt.Errorf("guest: to_item: %w", err)
		}
	} else {
		out = append(out, 0)
	}
	out = abi.AppendUvarint(out, uint64(count))
	return append(out, decisions...), nil
}

// step folds one event, appending its Decision to dst. A panic in domain code
// becomes a Failed decision tagged "Panic"; err is a guest-level failure
// (an effect or state that cannot be encoded).
func (c *core[S]) step(dst []byte, st *S, present, removed *bool, se *sourcedEvent[S], key Key) (out []byte, o abi.Outcome, err error) {
	start := len(dst)
	defer func() {
		if r := recover(); r != nil {
			out = append(dst[:start], byte(abi.Failed), 0)
			out = abi.AppendOptError(out, panicError(r))
			out = append(out, 0)
			o, err = abi.Failed, nil
		}
	}()
	e := se.e
	cur := *st
	if !*present {
		if c.single {
			cur = c.initSingle(e.StreamID, e)
		} else {
			cur = c.initMulti(key)
		}
	}
	next, evErr := se.src.evolve(cur, e, SourceContext{Source: se.src.desc.Name, StreamID: e.StreamID})
	ectx := EffectContext{Source: se.src.desc.Name, StreamID: e.StreamID, Key: key}
	switch {
	case evErr == nil:
		dst = append(dst, byte(abi.Applied), 0, 0)
		if dst, err = c.appendEffects(dst, e, &next, ectx); err != nil {
			return dst, 0, fmt.Errorf("guest: effects of %s v%d: %w", e.StreamID, e.Version, err)
		}
		*st, *present, *removed = next, true, false
		return dst, abi.Applied, nil
	case errors.Is(evErr, Skip):
		return append(dst, byte(abi.Skipped), 0, 0, 0), abi.Skipped, nil
	case errors.Is(evErr, RemoveRow):
		dst = append(dst, byte(abi.Applied), 1, 0)
		if dst, err = c.appendEffects(dst, e, nil, ectx); err != nil {
			return dst, 0, fmt.Errorf("guest: effects of %s v%d: %w", e.StreamID, e.Version, err)
		}
		var zero S
		*st, *present, *removed = zero, false, true
		return dst, abi.Applied, nil
	}
	o = abi.Failed
	if t := se.src.terminal; t != nil && t(evErr) {
		o = abi.Rejected
	}
	dst = append(dst, byte(o), 0)
	dst = abi.AppendOptError(dst, toABIError(evErr))
	return append(dst, 0), o, nil
}
