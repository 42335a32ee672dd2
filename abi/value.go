// Package abi is the single source of truth for the contract between the
// dynafold host and its plugins: the model of a DynamoDB attribute value, the
// messages exchanged with a plugin, their binary encoding and the ABI version.
//
// The host, the Go guest SDK and the project's DynamoDB-compatible server all
// use the Value type defined here, so a value read from DynamoDB reaches a
// plugin and comes back with exactly the types and digits it had.
//
// The package depends on the standard library only, and compiles for
// GOOS=wasip1 GOARCH=wasm, so a guest can import it.
package abi

import (
	"bytes"
	"sort"
)

// Kind is the DynamoDB type of a Value.
type Kind uint8

// The DynamoDB attribute types. KindInvalid is the zero Value: "no value".
const (
	KindInvalid Kind = iota
	KindS
	KindN
	KindB
	KindBOOL
	KindNULL
	KindM
	KindL
	KindSS
	KindNS
	KindBS
)

var kindNames = [...]string{"", "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}

// String returns the DynamoDB type descriptor of k ("S", "N", "M", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// KindOf returns the Kind named by a DynamoDB type descriptor, or KindInvalid.
func KindOf(descriptor string) Kind {
	for i, n := range kindNames {
		if i > 0 && n == descriptor {
			return Kind(i)
		}
	}
	return KindInvalid
}

// Value is one DynamoDB attribute value. Exactly the fields of its Kind are
// meaningful:
//
//	KindS    Str          KindN  Str (decimal text, as DynamoDB stores it)
//	KindB    Bytes        KindBOOL Bool       KindNULL (none)
//	KindM    Map          KindL  List
//	KindSS   Strs         KindNS Strs (decimal texts)   KindBS Blobs
//
// Numbers are kept as their decimal text and never pass through float64, so
// 38 significant digits survive every round trip. The zero Value (KindInvalid)
// means "absent".
//
// Kind and Bool sit together so that a Value takes 128 bytes on 64-bit
// platforms: Go maps store values of up to 128 bytes in place, larger ones
// in a separate allocation per entry (an Item of 8 attributes would cost 9
// allocations instead of 1).
type Value struct {
	Kind  Kind
	Bool  bool
	Str   string
	Bytes []byte
	Map   map[string]Value
	List  []Value
	Strs  []string
	Blobs [][]byte
}

// Item is a DynamoDB item, or a key: attribute names to values.
type Item = map[string]Value

// S returns a string Value.
func S(s string) Value { return Value{Kind: KindS, Str: s} }

// N returns a number Value from its decimal text (not validated here).
func N(decimal string) Value { return Value{Kind: KindN, Str: decimal} }

// B returns a binary Value.
func B(b []byte) Value { return Value{Kind: KindB, Bytes: b} }

// Bool returns a BOOL Value.
func Bool(b bool) Value { return Value{Kind: KindBOOL, Bool: b} }

// Null returns the NULL Value.
func Null() Value { return Value{Kind: KindNULL} }

// M returns a map Value.
func M(m map[string]Value) Value {
	if m == nil {
		m = map[string]Value{}
	}
	return Value{Kind: KindM, Map: m}
}

// L returns a list Value.
func L(l ...Value) Value {
	if l == nil {
		l = []Value{}
	}
	return Value{Kind: KindL, List: l}
}

// SS returns a string set Value.
func SS(s ...string) Value { return Value{Kind: KindSS, Strs: s} }

// NS returns a number set Value from decimal texts.
func NS(s ...string) Value { return Value{Kind: KindNS, Strs: s} }

// BS returns a binary set Value.
func BS(b ...[]byte) Value { return Value{Kind: KindBS, Blobs: b} }

// IsZero reports whether v is the zero Value, which stands for "absent".
func (v Value) IsZero() bool { return v.Kind == KindInvalid }

// Equal reports whether v and w are the same DynamoDB value. Numbers are
// compared by their text, so "1" and "1.0" differ here (the engine stores
// what it read and never rewrites numbers); sets are compared as sets.
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case KindS, KindN:
		return v.Str == w.Str
	case KindB:
		return bytes.Equal(v.Bytes, w.Bytes)
	case KindBOOL:
		return v.Bool == w.Bool
	case KindM:
		return ItemsEqual(v.Map, w.Map)
	case KindL:
		if len(v.List) != len(w.List) {
			return false
		}
		for i := range v.List {
			if !v.List[i].Equal(w.List[i]) {
				return false
			}
		}
		return true
	case KindSS, KindNS:
		return sameStrings(v.Strs, w.Strs)
	case KindBS:
		if len(v.Blobs) != len(w.Blobs) {
			return false
		}
		a := make([]string, len(v.Blobs))
		b := make([]string, len(w.Blobs))
		for i := range v.Blobs {
			a[i], b[i] = string(v.Blobs[i]), string(w.Blobs[i])
		}
		return sameStrings(a, b)
	}
	return true
}

// ItemsEqual reports whether two items hold the same attributes with equal values.
func ItemsEqual(a, b Item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !av.Equal(bv) {
			return false
		}
	}
	return true
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of v.
func (v Value) Clone() Value {
	switch v.Kind {
	case KindB:
		v.Bytes = append([]byte(nil), v.Bytes...)
	case KindM:
		v.Map = CloneItem(v.Map)
	case KindL:
		l := make([]Value, len(v.List))
		for i, e := range v.List {
			l[i] = e.Clone()
		}
		v.List = l
	case KindSS, KindNS:
		v.Strs = append([]string(nil), v.Strs...)
	case KindBS:
		bs := make([][]byte, len(v.Blobs))
		for i, b := range v.Blobs {
			bs[i] = append([]byte(nil), b...)
		}
		v.Blobs = bs
	}
	return v
}

// CloneItem returns a deep copy of an item (nil stays nil).
func CloneItem(it Item) Item {
	if it == nil {
		return nil
	}
	out := make(Item, len(it))
	for k, v := range it {
		out[k] = v.Clone()
	}
	return out
}
