package swap

import (
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/keys"
)

// alignNumbers returns got with every number that equals want's number at
// the same place written as want writes it ("2.2" for an expected "2.20"),
// so that a fixture compares numbers as DynamoDB does, by value, while any
// other difference stays. Maps and lists are aligned element by element;
// a number set equal to want's as a set of values takes want's texts.
func alignNumbers(want, got abi.Value) abi.Value {
	if want.Kind != got.Kind {
		return got
	}
	switch got.Kind {
	case abi.KindN:
		if sameNumber(want.Str, got.Str) {
			got.Str = want.Str
		}
	case abi.KindNS:
		if sameNumbers(want.Strs, got.Strs) {
			got.Strs = want.Strs
		}
	case abi.KindM:
		got.Map = alignItem(want.Map, got.Map)
	case abi.KindL:
		if len(want.List) == len(got.List) {
			list := make([]abi.Value, len(got.List))
			for i := range got.List {
				list[i] = alignNumbers(want.List[i], got.List[i])
			}
			got.List = list
		}
	}
	return got
}

// alignItem is alignNumbers for every attribute of an item, in a copy.
func alignItem(want, got abi.Item) abi.Item {
	if got == nil {
		return nil
	}
	out := make(abi.Item, len(got))
	for k, g := range got {
		if w, ok := want[k]; ok {
			g = alignNumbers(w, g)
		}
		out[k] = g
	}
	return out
}

// sameNumber reports whether two number texts are the same value.
func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	x, okx := keys.CanonicalNumber(a)
	y, oky := keys.CanonicalNumber(b)
	return okx && oky && x == y
}

// sameNumbers reports whether two number sets hold the same values.
func sameNumbers(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && sameNumber(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
