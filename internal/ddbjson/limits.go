package ddbjson

import (
	"slices"

	"github.com/dynafold/dynafold/abi"
)

// Limits bounds what DecodeItemLimits builds, so that a hostile input is
// refused after building about as much as the limit allows, not after
// building all of it. A zero field means no limit.
type Limits struct {
	// MaxItemSize is the largest size of the whole item, by DynamoDB's
	// rules (see expr.ItemSize in ddblocal): attribute names, values, 3
	// bytes per list or map and 1 per element. While decoding, a number
	// counts 1 byte (its true size needs it parsed), so an item refused is
	// surely over the limit, and an item accepted can still be over it by
	// its numbers' share.
	MaxItemSize int
	// MaxValueSize is the largest size of each attribute's value, counted
	// the same way.
	MaxValueSize int
	// MaxDepth is the deepest nesting of values: an attribute's value is
	// at level 1, an element of a list or map one level below its parent.
	MaxDepth int
	// StrictBase64 refuses binaries whose base64 is not canonical (padding
	// bits not zero), as DynamoDB does; encoding/json accepts them.
	StrictBase64 bool
}

// maxJSONDepth is encoding/json's own nesting limit; deeper input is a
// syntax error there, and so here.
const maxJSONDepth = 10000

// DecodeItemLimits decodes a JSON object of attribute values as DecodeItem
// does, and stops with a TooLarge or TooDeep *DecodeError as soon as the
// item passes one of lim's limits (Attr names the attribute). Other errors
// are DecodeItem's, for the same input.
func DecodeItemLimits(b []byte, lim Limits) (abi.Item, error) {
	d := &decoder{b: b, lim: lim}
	d.ws()
	if d.pos < len(d.b) && d.b[d.pos] == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, d.fail(err)
		}
		if err := d.end(); err != nil {
			return nil, d.fail(err)
		}
		return abi.Item{}, nil
	}
	it, err := d.item(0)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, d.fail(err)
	}
	return it, nil
}

// DecodeItemAt decodes the JSON object of attribute values at b[pos:]
// (b is valid JSON, the object one of its values) as DecodeItemLimits
// decodes that object alone, and returns where it ends: no scan for its
// end first. Any error is returned as decoding met it, not as
// DecodeItemLimits would word it: a caller that needs its words decodes
// the object with DecodeItemLimits instead.
func DecodeItemAt(b []byte, pos int, lim Limits) (abi.Item, int, error) {
	it, end, _, err := DecodeItemAtWide(b, pos, lim, false)
	return it, end, err
}

// DecodeItemAtWide is DecodeItemAt for a caller that keeps, across its
// calls, whether the last item it decoded was wide (had more attributes
// than a Go map's first group holds): given wide, the item's attributes
// are counted before its map is made, so that a wide item's map is made
// once, at its size. It returns whether this item was wide.
func DecodeItemAtWide(b []byte, pos int, lim Limits, wide bool) (abi.Item, int, bool, error) {
	d := &decoder{b: b, pos: pos, lim: lim, from: pos}
	if wide {
		d.wide = 1 // level 0's bit
	}
	it, err := d.item(0)
	if err != nil {
		return nil, 0, false, err
	}
	return it, d.pos, d.wide&1 != 0, nil
}

// DecodeValueLimits decodes one attribute value as DecodeValue does, with
// lim's MaxValueSize and MaxDepth.
func DecodeValueLimits(b []byte, lim Limits) (abi.Value, error) {
	d := &decoder{b: b, lim: lim}
	d.ws()
	var v abi.Value
	err := d.value(1, &v)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return abi.Value{}, d.fail(err)
	}
	return v, nil
}

// ItemDecoder decodes the items of one answer (a Query's Items, a
// BatchGetItem's Responses) as DecodeItem does, the items sharing the
// strings of their attribute names. Not safe for concurrent use.
type ItemDecoder struct {
	names map[string]string
}

// Decode is DecodeItem.
func (x *ItemDecoder) Decode(b []byte) (abi.Item, error) {
	if x.names == nil {
		x.names = make(map[string]string, 16)
	}
	d := &decoder{b: b, names: x.names}
	d.ws()
	if d.pos < len(d.b) && d.b[d.pos] == 'n' {
		return DecodeItem(b)
	}
	it, err := d.item(0)
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, d.fail(err)
	}
	return it, nil
}

// DecodeAt is DecodeItemAt (the item at pos of b, within lim, and the
// position after it), the item sharing the strings of its attribute names
// with the decoder's other items: the keys of one request, which repeat
// the same names.
func (x *ItemDecoder) DecodeAt(b []byte, pos int, lim Limits) (abi.Item, int, error) {
	if x.names == nil {
		x.names = make(map[string]string, 16)
	}
	d := &decoder{b: b, pos: pos, lim: lim, names: x.names}
	it, err := d.item(0)
	if err != nil {
		return nil, 0, err
	}
	return it, d.pos, nil
}

// DecodeList decodes a JSON array of items (null: none) in one pass, as
// Array with Decode for each element would, without scanning each
// element once more to find where it ends.
func (x *ItemDecoder) DecodeList(b []byte) ([]abi.Item, error) {
	if x.names == nil {
		x.names = make(map[string]string, 16)
	}
	d := &decoder{b: b, names: x.names}
	d.ws()
	if d.peek() == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, d.fail(err)
		}
		if err := d.end(); err != nil {
			return nil, d.fail(err)
		}
		return nil, nil
	}
	if d.peek() != '[' {
		return nil, d.walkErr(errNotArray)
	}
	d.pos++
	out := []abi.Item{}
	d.ws()
	if d.peek() == ']' {
		d.pos++
		if err := d.end(); err != nil {
			return nil, d.fail(err)
		}
		return out, nil
	}
	for {
		d.ws()
		start := d.pos
		it, err := d.item(0)
		if err != nil {
			return nil, d.fail(err)
		}
		if cap(out) == len(out) {
			// room for as many more items as the first's size says the
			// rest of the list holds (no scan ahead), as Node.Items
			out = slices.Grow(out, 1+(len(d.b)-d.pos)/max(1, d.pos-start))
		}
		out = append(out, it)
		d.size, d.vsize = 0, 0 // each item counts on its own
		done, err := d.next(']')
		if err == nil && done {
			err = d.end()
		}
		if err != nil {
			return nil, d.fail(err)
		}
		if done {
			return out, nil
		}
	}
}
