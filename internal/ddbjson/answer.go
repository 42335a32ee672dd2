package ddbjson

import (
	"slices"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
)

// Answer reads an answer of DynamoDB's JSON protocol, the JSON object b,
// in one pass: it calls member for each top-level member, in order, with
// its key and a Node on its value, which member may read (Item, Items,
// Object) or leave, to be skipped. Errors are Object's; an error of
// member ends the walk and is returned, except Stop.
//
// The items read share one copy of b, made once: their strings are
// substrings of it (no allocation for each), and their lists and sets are
// carved from blocks shared between them. So the copy stays in memory as
// long as one of the items does; b itself is not referenced once Answer
// returns (the caller may reuse it). key and the Nodes are valid only
// during member's call; key must not be modified.
func Answer(b []byte, member func(key []byte, v *Node) error) error {
	src := string(b)
	d := &decoder{b: unsafe.Slice(unsafe.StringData(src), len(src)), src: src}
	n := Node{d: d}
	err := n.object(member)
	if err == nil {
		err = d.end()
	}
	return d.walkErr(err)
}

// Node is a JSON value inside an Answer, read in place.
type Node struct {
	d *decoder
}

// IsNull reports whether the value is null.
func (n *Node) IsNull() bool { return n.d.peek() == 'n' }

// Item decodes the value as DecodeItem does (null: an empty item).
func (n *Node) Item() (abi.Item, error) {
	d := n.d
	if d.peek() == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, d.fail(err)
		}
		return abi.Item{}, nil
	}
	d.size, d.vsize = 0, 0
	it, err := d.item(0)
	if err != nil {
		return nil, d.fail(err)
	}
	return it, nil
}

// Items decodes the value, a JSON array of items (null: none), appending
// them to items, as ItemDecoder.DecodeList does.
func (n *Node) Items(items []abi.Item) ([]abi.Item, error) {
	d := n.d
	if c := d.peek(); c != 'n' && c != '[' {
		return items, errNotArray
	}
	err := n.Array(func(*Node) error {
		d.size, d.vsize = 0, 0 // each item counts on its own
		start := d.pos
		it, err := d.item(0)
		if err != nil {
			return err
		}
		if cap(items) == len(items) {
			// room for as many more items as the first's size says
			// the rest of the answer holds (no scan ahead)
			items = slices.Grow(items, 1+(len(d.b)-d.pos)/max(1, d.pos-start))
		}
		items = append(items, it)
		return nil
	})
	if err != nil {
		return items, d.fail(err)
	}
	return items, nil
}

// Object calls member for each member of the value, a JSON object, as
// Answer calls it for the answer's own; null has no members.
func (n *Node) Object(member func(key []byte, v *Node) error) error {
	if n.d.peek() == 'n' {
		return n.d.literal("null")
	}
	return n.object(member)
}

func (n *Node) object(member func(key []byte, v *Node) error) error {
	d := n.d
	d.ws()
	if d.peek() != '{' {
		return errNotObject
	}
	if empty, err := d.open('}'); empty || err != nil {
		return err
	}
	for {
		d.ws()
		if d.peek() != '"' {
			return errSyntax
		}
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := d.colon(); err != nil {
			return err
		}
		start := d.pos
		if err := member(key, n); err != nil {
			return err
		}
		if d.pos == start { // left unread
			if err := d.skip(); err != nil {
				return err
			}
		}
		if done, err := d.next('}'); done || err != nil {
			d.jsonD--
			return err
		}
	}
}

// String decodes the value, a JSON string (a substring of the answer's
// copy when it has no escape).
func (n *Node) String() (string, error) {
	d := n.d
	if d.peek() != '"' {
		return "", errNotString
	}
	return d.str()
}

// Raw returns the value's JSON text, its syntax checked (a number's
// digits, say), in the answer's copy: not to be modified.
func (n *Node) Raw() ([]byte, error) {
	d := n.d
	start := d.pos
	if err := d.skip(); err != nil {
		return nil, err
	}
	return d.b[start:d.pos], nil
}

// Array calls elem for each element of the value, a JSON array (null: no
// elements), with a Node on it; an element elem does not read is skipped.
func (n *Node) Array(elem func(v *Node) error) error {
	d := n.d
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return errNotArray
	}
	if empty, err := d.open(']'); empty || err != nil {
		return err
	}
	for {
		d.ws()
		start := d.pos
		if err := elem(n); err != nil {
			return err
		}
		if d.pos == start {
			if err := d.skip(); err != nil {
				return err
			}
		}
		if done, err := d.next(']'); done || err != nil {
			d.jsonD--
			return err
		}
	}
}
