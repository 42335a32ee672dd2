package expr

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/dynafold/dynafold/abi"
)

// lookup returns the value at path in item; ok is false when absent (a
// missing key or index, or a step through a value of the wrong type).
func lookup(item abi.Item, path Path) (abi.Value, bool) {
	if len(path) == 0 || path[0].IsIndex || item == nil {
		return abi.Value{}, false
	}
	v, ok := item[path[0].Name]
	if !ok {
		return abi.Value{}, false
	}
	for _, e := range path[1:] {
		if e.IsIndex {
			if v.Kind != abi.KindL || e.Index >= len(v.List) {
				return abi.Value{}, false
			}
			v = v.List[e.Index]
			continue
		}
		if v.Kind != abi.KindM {
			return abi.Value{}, false
		}
		if v, ok = v.Map[e.Name]; !ok {
			return abi.Value{}, false
		}
	}
	return v, true
}

// evalOperand evaluates a condition operand; ok is false when it is absent.
func evalOperand(o *operand, item abi.Item) (abi.Value, bool) {
	switch o.typ {
	case opPath:
		return lookup(item, o.path)
	case opValue:
		return o.val, true
	case opFunc:
		if o.name == "size" {
			v, ok := evalOperand(o.args[0], item)
			if !ok {
				return abi.Value{}, false
			}
			n, ok := sizeOf(v)
			if !ok {
				return abi.Value{}, false
			}
			return abi.N(strconv.Itoa(n)), true
		}
	}
	return abi.Value{}, false
}

// sizeOf is the size() function: string length in UTF-16 code units (as
// DynamoDB counts), binary length in bytes, element count of sets, lists
// and maps. Other types have no size.
func sizeOf(v abi.Value) (int, bool) {
	switch v.Kind {
	case abi.KindS:
		n := 0
		for _, r := range v.Str {
			n += utf16.RuneLen(r)
		}
		return n, true
	case abi.KindB:
		return len(v.Bytes), true
	case abi.KindSS, abi.KindNS:
		return len(v.Strs), true
	case abi.KindBS:
		return len(v.Blobs), true
	case abi.KindL:
		return len(v.List), true
	case abi.KindM:
		return len(v.Map), true
	}
	return 0, false
}

// evalBoolFunc evaluates a boolean function of a condition.
func evalBoolFunc(f *operand, item abi.Item) bool {
	switch f.name {
	case "attribute_exists":
		_, ok := evalOperand(f.args[0], item)
		return ok
	case "attribute_not_exists":
		_, ok := evalOperand(f.args[0], item)
		return !ok
	case "attribute_type":
		v, ok := evalOperand(f.args[0], item)
		t, tok := evalOperand(f.args[1], item)
		return ok && tok && t.Kind == abi.KindS && v.Kind.String() == t.Str
	case "begins_with":
		v, ok := evalOperand(f.args[0], item)
		p, pok := evalOperand(f.args[1], item)
		if !ok || !pok || v.Kind != p.Kind {
			return false
		}
		switch v.Kind {
		case abi.KindS:
			return strings.HasPrefix(v.Str, p.Str)
		case abi.KindB:
			return bytes.HasPrefix(v.Bytes, p.Bytes)
		}
		return false
	case "contains":
		v, ok := evalOperand(f.args[0], item)
		x, xok := evalOperand(f.args[1], item)
		return ok && xok && contains(v, x)
	}
	return false
}

// contains is the contains() function: a substring of a string, a
// subsequence of bytes of a binary, a member of a set or an element of a list.
func contains(v, x abi.Value) bool {
	switch v.Kind {
	case abi.KindS:
		return x.Kind == abi.KindS && strings.Contains(v.Str, x.Str)
	case abi.KindB:
		return x.Kind == abi.KindB && bytes.Contains(v.Bytes, x.Bytes)
	case abi.KindSS:
		return x.Kind == abi.KindS && containsString(v.Strs, x.Str)
	case abi.KindNS:
		if x.Kind != abi.KindN {
			return false
		}
		for _, s := range v.Strs {
			if c, ok := compareNumbers(s, x.Str); ok && c == 0 {
				return true
			}
		}
		return false
	case abi.KindBS:
		if x.Kind != abi.KindB {
			return false
		}
		for _, b := range v.Blobs {
			if bytes.Equal(b, x.Bytes) {
				return true
			}
		}
		return false
	case abi.KindL:
		for _, e := range v.List {
			if valuesEqual(e, x) {
				return true
			}
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Compare orders two scalar values of one kind (N numerically, S by UTF-8
// bytes, B by bytes); ok is false when they are not comparable (different
// kinds, or kinds with no order).
func Compare(a, b abi.Value) (c int, ok bool) {
	if a.Kind != b.Kind {
		return 0, false
	}
	switch a.Kind {
	case abi.KindN:
		return compareNumbers(a.Str, b.Str)
	case abi.KindS:
		return strings.Compare(a.Str, b.Str), true
	case abi.KindB:
		return bytes.Compare(a.Bytes, b.Bytes), true
	}
	return 0, false
}

// valuesEqual is DynamoDB's equality: same type and value, numbers compared
// numerically, sets as sets, lists and maps element by element.
func valuesEqual(a, b abi.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case abi.KindN:
		c, ok := compareNumbers(a.Str, b.Str)
		return ok && c == 0 || !ok && a.Str == b.Str
	case abi.KindNS:
		if len(a.Strs) != len(b.Strs) {
			return false
		}
		set := map[string]bool{}
		for _, s := range a.Strs {
			set[numberKey(s)] = true
		}
		for _, s := range b.Strs {
			if !set[numberKey(s)] {
				return false
			}
		}
		return true
	case abi.KindL:
		if len(a.List) != len(b.List) {
			return false
		}
		for i := range a.List {
			if !valuesEqual(a.List[i], b.List[i]) {
				return false
			}
		}
		return true
	case abi.KindM:
		if len(a.Map) != len(b.Map) {
			return false
		}
		for k, av := range a.Map {
			bv, ok := b.Map[k]
			if !ok || !valuesEqual(av, bv) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// valueDesc renders a scalar the way DynamoDB's BETWEEN messages do (N:1, S:a).
func valueDesc(v abi.Value) string {
	switch v.Kind {
	case abi.KindS, abi.KindN:
		return v.Kind.String() + ":" + v.Str
	case abi.KindB:
		return "B:" + base64Std(v.Bytes)
	case abi.KindBOOL:
		return "BOOL:" + strconv.FormatBool(v.Bool)
	}
	return v.Kind.String()
}
