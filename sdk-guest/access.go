package guest

import "github.com/dynafold/dynafold/abi"

// Typed accessors of an event's data attributes: a lighter alternative to
// Decode for reading one or two attributes (no mapping plan is consulted).
// Each reports false when the attribute is absent or of another type.

// find positions r at the payload of the data attribute name and returns
// its kind (KindInvalid when absent).
func (e *Event) find(r *abi.Reader, name string) abi.Kind {
	r.Reset(e.data)
	n, ok := r.OptCount()
	for i := 0; ok && i < n; i++ {
		key, ok := r.ShortString()
		if !ok {
			key = r.String()
		}
		kb, ok := r.NextByte()
		if !ok {
			return abi.KindInvalid
		}
		if key == name {
			return abi.Kind(kb)
		}
		switch abi.Kind(kb) {
		case abi.KindS, abi.KindN, abi.KindB:
			if _, ok := r.ShortString(); ok {
				continue
			}
		case abi.KindNULL:
			continue
		}
		r.Unread()
		r.SkipValue()
		if r.Err() != nil {
			return abi.KindInvalid
		}
	}
	return abi.KindInvalid
}

// Str returns the S attribute name of the event's data.
func (e *Event) Str(name string) (string, bool) {
	var r abi.Reader
	if e.find(&r, name) != abi.KindS {
		return "", false
	}
	s := r.String()
	return s, r.Err() == nil
}

// Num returns the N attribute name of the event's data, as exact text.
func (e *Event) Num(name string) (Number, bool) {
	var r abi.Reader
	if e.find(&r, name) != abi.KindN {
		return "", false
	}
	s := r.String()
	return Number(s), r.Err() == nil
}

// Float returns the N attribute name of the event's data as a float64.
func (e *Event) Float(name string) (float64, bool) {
	n, ok := e.Num(name)
	if !ok {
		return 0, false
	}
	f, err := parseFloat(string(n))
	return f, err == nil
}

// Int returns the N attribute name of the event's data as an int64.
func (e *Event) Int(name string) (int64, bool) {
	n, ok := e.Num(name)
	if !ok {
		return 0, false
	}
	return parseInt(string(n), 64)
}

// Bool returns the BOOL attribute name of the event's data.
func (e *Event) Bool(name string) (value, ok bool) {
	var r abi.Reader
	if e.find(&r, name) != abi.KindBOOL {
		return false, false
	}
	b := r.Bool()
	return b, r.Err() == nil
}
