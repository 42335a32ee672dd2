package guest

import "github.com/dynafold/dynafold/abi"

// Typed accessors of an event's data attributes: a lighter alternative to
// Decode for reading one or two attributes (no mapping plan is consulted).
// Each reports false when the attribute is absent or of another type.

// lookup returns the kind of the data attribute name and the offset of its
// payload in data (KindInvalid when absent). The common case (short names
// and scalar values before it) is read inline; anything else by find.
func lookup(data, name string) (abi.Kind, int) {
	if len(data) == 0 || data[0] >= 0x80 {
		return find(data, name)
	}
	n := int(data[0]) - 1 // an absent item (0) reads no entries
	o := 1
	for i := 0; i < n; i++ {
		var key string
		if key, o = shortStr(data, o); uint(o) >= uint(len(data)) {
			return find(data, name)
		}
		k := abi.Kind(data[o])
		o++
		if len(key) == len(name) && eqStr(key, name) {
			return k, o
		}
		switch k {
		case abi.KindS, abi.KindN, abi.KindB:
			_, o = shortStr(data, o)
		case abi.KindNULL:
		case abi.KindBOOL:
			o++
		default:
			o = -1
		}
		if o < 0 {
			return find(data, name)
		}
	}
	return abi.KindInvalid, 0
}

// find is lookup by the general reader.
func find(data, name string) (abi.Kind, int) {
	var r abi.Reader
	r.Reset(data)
	n, ok := r.OptCount()
	for i := 0; ok && i < n; i++ {
		key := r.String()
		kb, ok := r.NextByte()
		if !ok || r.Err() != nil {
			return abi.KindInvalid, 0
		}
		if key == name {
			return abi.Kind(kb), r.Offset()
		}
		r.Unread()
		r.SkipValue()
		if r.Err() != nil {
			return abi.KindInvalid, 0
		}
	}
	return abi.KindInvalid, 0
}

// text returns the str payload at o of data.
func text(data string, o int) (string, bool) {
	if s, next := shortStr(data, o); next >= 0 {
		return s, true
	}
	var r abi.Reader
	r.Reset(data)
	r.Raw(o)
	s := r.String()
	return s, r.Err() == nil
}

// Str returns the S attribute name of the event's data.
func (e *Event) Str(name string) (string, bool) {
	k, o := lookup(e.data, name)
	if k != abi.KindS {
		return "", false
	}
	return text(e.data, o)
}

// Num returns the N attribute name of the event's data, as exact text.
func (e *Event) Num(name string) (Number, bool) {
	k, o := lookup(e.data, name)
	if k != abi.KindN {
		return "", false
	}
	s, ok := text(e.data, o)
	return Number(s), ok
}

// Float returns the N attribute name of the event's data as a float64.
func (e *Event) Float(name string) (float64, bool) {
	k, o := lookup(e.data, name)
	if k != abi.KindN {
		return 0, false
	}
	s, next := shortStr(e.data, o)
	if next < 0 {
		var ok bool
		if s, ok = text(e.data, o); !ok {
			return 0, false
		}
	}
	if f, ok := fastFloat(s); ok {
		return f, true
	}
	f, err := parseFloat(s)
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
	k, o := lookup(e.data, name)
	if k != abi.KindBOOL || o >= len(e.data) {
		return false, false
	}
	switch e.data[o] {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}
