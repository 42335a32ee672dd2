package ddbjson

import (
	"encoding/base64"
	"fmt"
	"reflect"

	"github.com/dynafold/dynafold/abi"
)

// The decoder's lists, sets and scalars inside them, and the blocks that
// Answer's lists and sets are carved from.

// list decodes an L into *dst: up to smallList members into a buffer on
// the stack, then, for a longer list, the rest counted and decoded in
// place into a slice of the list's size.
func (d *decoder) list(level int, dst *abi.Value) error {
	if err := d.count(3); err != nil {
		return err
	}
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return err
		}
		*dst = abi.Value{Kind: abi.KindL, List: []abi.Value{}}
		return nil
	default:
		return d.wrapMismatch("L", d.mismatch(typeRaws))
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	if empty {
		*dst = abi.Value{Kind: abi.KindL, List: []abi.Value{}}
		return nil
	}
	var (
		buf [smallList]abi.Value
		n   int         // members in buf
		l   []abi.Value // the list, once longer than buf
	)
	for {
		d.ws()
		if n == smallList && l == nil {
			// longer than buf: the rest counted (and refused by the
			// limits before any of it is built), the list made at its
			// size
			rest, err := d.rest(true)
			if err != nil {
				return err
			}
			l = append(d.values(n+rest), buf[:n]...)
		}
		if err := d.count(1); err != nil {
			return err
		}
		var v *abi.Value
		switch {
		case l == nil:
			v = &buf[n]
			n++
		case len(l) < cap(l):
			l = l[:len(l)+1]
			v = &l[len(l)-1]
		default: // miscounted: not JSON, which decoding finds out
			l = append(l, abi.Value{})
			v = &l[len(l)-1]
		}
		if err := d.value(level+1, v); err != nil {
			return err
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			break
		}
	}
	d.jsonD--
	if l == nil {
		l = append(d.values(n), buf[:n]...)
	}
	*dst = abi.Value{Kind: abi.KindL, List: l}
	return nil
}

// strs decodes an SS or NS (code tSS or tNS, descriptor t) into *dst: a
// JSON array of strings (null members are ""), decoded as list decodes
// its members.
func (d *decoder) strs(code int, t string, dst *abi.Value) error {
	kind := abi.KindSS
	if code == tNS {
		kind = abi.KindNS
	}
	switch d.peek() {
	case '[':
	case 'n':
		if err := d.literal("null"); err != nil {
			return err
		}
		*dst = abi.Value{Kind: kind, Strs: []string{}}
		return nil
	default:
		return d.wrapMismatch(t, d.mismatch(typeStrs))
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	if empty {
		*dst = abi.Value{Kind: kind, Strs: []string{}}
		return nil
	}
	var (
		buf [smallSet]string
		n   int
		ss  []string
	)
	for {
		d.ws()
		if n == smallSet && ss == nil {
			rest, err := d.rest(false)
			if err != nil {
				return err
			}
			ss = append(d.strings(n+rest), buf[:n]...)
		}
		s, err := d.strOrNull(typeString)
		if err != nil {
			return d.wrapMismatch(t, err)
		}
		size := len(s)
		if kind == abi.KindNS && size > 0 {
			size = 1
		}
		if err := d.count(size); err != nil {
			return err
		}
		if ss != nil {
			ss = append(ss, s)
		} else {
			buf[n] = s
			n++
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			break
		}
	}
	d.jsonD--
	if ss == nil {
		ss = append(d.strings(n), buf[:n]...)
	}
	*dst = abi.Value{Kind: kind, Strs: ss}
	return nil
}

// blobs decodes a BS into *dst: a JSON array of base64 strings (rare: its
// members are counted first).
func (d *decoder) blobs(dst *abi.Value) error {
	var bs [][]byte
	err := d.array("BS", typeRaws, false, func(n int) { bs = make([][]byte, 0, n) }, func() error {
		b, err := d.blob()
		if err != nil {
			return err
		}
		if err := d.count(len(b)); err != nil {
			return err
		}
		bs = append(bs, b)
		return nil
	})
	if err != nil {
		return err
	}
	if bs == nil {
		bs = [][]byte{}
	}
	*dst = abi.Value{Kind: abi.KindBS, Blobs: bs}
	return nil
}

// array walks the JSON array of a BS (null: no members): it counts the
// members first (start gets the count, for a slice's capacity, and is
// not called for null), then calls member at each one, the decoder on
// its first byte.
func (d *decoder) array(t string, goType reflect.Type, values bool, start func(n int), member func() error) error {
	switch d.peek() {
	case '[':
	case 'n':
		return d.literal("null")
	default:
		return d.wrapMismatch(t, d.mismatch(goType))
	}
	n, err := d.members(values)
	if err != nil {
		return err
	}
	empty, err := d.open(']')
	if err != nil {
		return err
	}
	start(n)
	if empty {
		return nil
	}
	for {
		d.ws()
		if err := member(); err != nil {
			return err
		}
		if done, err := d.next(']'); err != nil {
			return err
		} else if done {
			d.jsonD--
			return nil
		}
	}
}

// blob decodes a base64 string (null: empty).
func (d *decoder) blob() ([]byte, error) {
	s, err := d.strOrNull(typeString)
	if err != nil {
		return nil, d.wrapMismatch("B", err)
	}
	enc := base64.StdEncoding
	if d.lim.StrictBase64 {
		enc = enc.Strict()
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, syntax("B", fmt.Errorf("not valid base64: %w", err))
	}
	return b, nil
}

// strOrNull decodes a JSON string, or null as "" (encoding/json leaves a
// string unset for null); anything else is a type mismatch with t.
func (d *decoder) strOrNull(t reflect.Type) (string, error) {
	switch d.peek() {
	case '"':
		return d.str()
	case 'n':
		return "", d.literal("null")
	}
	return "", d.mismatch(t)
}

func (d *decoder) boolOrNull() (bool, error) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	}
	return false, d.mismatch(typeBool)
}

// slabMax is the largest block lists and sets are carved from.
const slabMax = 256

// values returns an empty slice with room for n values: carved from a
// shared block when decoding from src (its capacity n, so an append
// elsewhere never writes into a neighbour), else made for it.
func (d *decoder) values(n int) []abi.Value {
	if d.src == "" || n > slabMax/4 {
		return make([]abi.Value, 0, n)
	}
	if cap(d.vslab)-len(d.vslab) < n {
		d.vslab = make([]abi.Value, 0, d.slab(d.vused, n, 128))
	}
	d.vused += n
	l := len(d.vslab)
	d.vslab = d.vslab[:l+n]
	return d.vslab[l : l : l+n]
}

// strings is values for a set's strings.
func (d *decoder) strings(n int) []string {
	if d.src == "" || n > slabMax/4 {
		return make([]string, 0, n)
	}
	if cap(d.sslab)-len(d.sslab) < n {
		d.sslab = make([]string, 0, d.slab(d.sused, n, 64))
	}
	d.sused += n
	l := len(d.sslab)
	d.sslab = d.sslab[:l+n]
	return d.sslab[l : l : l+n]
}

// slab is the size of the next block, for n members now and used carved
// so far: the first one from the input's size (a list member takes at
// least perByte bytes of it in common answers), the next ones from the
// rest of the input at the rate of the part read, within [4, slabMax]
// (a small floor: the estimates are close, and every value a block
// holds unused is 128 bytes more for the collector).
func (d *decoder) slab(used, n, perByte int) int {
	est := len(d.b) / perByte
	if used > 0 {
		est = n + (len(d.b)-d.pos)*used/max(1, d.pos)
	}
	return min(slabMax, max(4, n, est))
}
