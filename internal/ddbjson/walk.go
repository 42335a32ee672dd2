package ddbjson

import (
	"bytes"
	"errors"
	"fmt"
)

// The walkers read the plain JSON around DynamoDB JSON (a Lambda event's
// envelope, the change record in a Kinesis record) in one pass, without
// reflection and without copying the values they hand over: each value is
// a sub-slice of the input, its syntax checked, so an image can go to
// DecodeItem as it is.

// Stop, returned by a walker's callback, ends the walk with no error and
// without reading the rest of the input.
var Stop = errors.New("ddbjson: stop")

// ErrShape is matched by the error of a walker given valid JSON of another
// kind (Object given an array, say).
var ErrShape = errors.New("ddbjson: JSON of another kind")

var (
	errNotObject = fmt.Errorf("%w: want an object", ErrShape)
	errNotArray  = fmt.Errorf("%w: want an array", ErrShape)
	errNotString = fmt.Errorf("%w: want a string", ErrShape)
)

// Object calls member for each member of the JSON object b (whitespace
// around it allowed), in order, with its key (escapes resolved) and its
// value as a sub-slice of b. Input that is not one JSON object is a Syntax
// *DecodeError with encoding/json's message; an error of member ends the
// walk and is returned, except Stop, which ends it with nil.
func Object(b []byte, member func(key, value []byte) error) error {
	d := &decoder{b: b}
	err := d.object(member)
	if err == nil {
		err = d.end()
	}
	return d.walkErr(err)
}

// Array calls elem for each element of the JSON array b (whitespace around
// it allowed), in order, as a sub-slice of b. Errors as for Object.
func Array(b []byte, elem func(value []byte) error) error {
	d := &decoder{b: b}
	err := d.array0(elem)
	if err == nil {
		err = d.end()
	}
	return d.walkErr(err)
}

// String decodes the JSON string b, escapes resolved as encoding/json
// resolves them.
func String(b []byte) (string, error) {
	d := &decoder{b: bytes.TrimSpace(b)}
	if d.peek() != '"' {
		return "", d.walkErr(errNotString)
	}
	s, err := d.str()
	if err == nil {
		err = d.end()
	}
	return s, d.walkErr(err)
}

// IsNull reports whether the JSON value b is null.
func IsNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

func (d *decoder) walkErr(err error) error {
	switch {
	case err == nil || err == Stop:
		return nil
	case err == errSyntax:
		return d.fail(err)
	case err == errNotObject || err == errNotArray || err == errNotString:
		if !Valid(d.b) {
			return d.fail(errSyntax)
		}
	}
	return err
}

func (d *decoder) object(member func(key, value []byte) error) error {
	d.ws()
	if d.peek() != '{' {
		return errNotObject
	}
	d.pos++
	d.ws()
	if d.peek() == '}' {
		d.pos++
		return nil
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
		if err := d.skip(); err != nil {
			return err
		}
		if err := member(key, d.b[start:d.pos]); err != nil {
			return err
		}
		if done, err := d.next('}'); done || err != nil {
			return err
		}
	}
}

func (d *decoder) array0(elem func(value []byte) error) error {
	d.ws()
	if d.peek() != '[' {
		return errNotArray
	}
	d.pos++
	d.ws()
	if d.peek() == ']' {
		d.pos++
		return nil
	}
	for {
		d.ws()
		start := d.pos
		if err := d.skip(); err != nil {
			return err
		}
		if err := elem(d.b[start:d.pos]); err != nil {
			return err
		}
		if done, err := d.next(']'); done || err != nil {
			return err
		}
	}
}

// key reads the string at pos as a key: a sub-slice of the input when it
// has no escape, else the decoded string's bytes.
func (d *decoder) key() ([]byte, error) {
	start := d.pos + 1
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.pos = i + 1
			return d.b[start:i], nil
		case c == '\\' || c >= 0x80:
			s, err := d.str()
			return []byte(s), err
		case c < 0x20:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}
