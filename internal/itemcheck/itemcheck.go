// Package itemcheck checks what a plugin returns — a row's item, an
// effect — against the rules DynamoDB applies to what it stores, without a
// request: numbers DynamoDB can store, sets that are not empty and hold no
// duplicates, attribute names that are not empty, nesting at most 32 levels
// deep, items of at most 400 KB, and key attributes that are the row's.
// The engine runs it before every write, and the offline checks of a
// plugin (validate's self test through the Go SDK's guesttest, plugin test,
// the hot-swap smoke test) run the same code, so a module whose output
// DynamoDB would refuse is refused before it serves.
//
// It depends on the standard library and abi only (and ddbjson's size
// rules), and compiles for GOOS=wasip1, so a guest can run it too.
package itemcheck

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// DynamoDB's limits on what it stores.
const (
	// MaxItemSize is the largest item, counted by Size.
	MaxItemSize = 400 * 1024
	// MaxDepth is the deepest nesting: an attribute's value is at level 1,
	// an element of a list or map one level below its parent.
	MaxDepth = 32
	// MaxDigits is the most significant digits of a number.
	MaxDigits = 38
	// MaxNameBytes is the longest attribute name, in bytes (less than 64 KB).
	MaxNameBytes = 64*1024 - 1
	// A number's magnitude is between 1E-130 and 9.99…E+125: its adjusted
	// exponent (that of its first significant digit) is within these.
	minAdjExp = -130
	maxAdjExp = 125
)

// Problem is what DynamoDB would refuse in an item or a value: the
// attribute path ("qty", "lines[2].price", "tags") and what is wrong.
type Problem struct {
	Path string
	What string
}

// Error implements error.
func (p *Problem) Error() string { return fmt.Sprintf("attribute %q %s", p.Path, p.What) }

// Item checks an item a plugin returned for the row whose key is key:
// every attribute's name and value, and the key attributes, which must be
// absent (the host sets them) or hold exactly the row's key, type
// included. A top-level zero Value is absent: the host leaves it out. It
// returns the first problem in attribute-name order, nil when there is
// none. The item's size is Size's to check, on the item as written.
func Item(item, key abi.Item) *Problem {
	var first *Problem
	for name, v := range item {
		if p := attribute(name, v, key); p != nil && (first == nil || p.Path < first.Path) {
			first = p
		}
	}
	return first
}

func attribute(name string, v abi.Value, key abi.Item) *Problem {
	if name == "" {
		return &Problem{Path: name, What: "has an empty name; DynamoDB refuses empty attribute names"}
	}
	if len(name) > MaxNameBytes {
		return &Problem{Path: name[:32] + "…", What: fmt.Sprintf("has a name of %d bytes; DynamoDB's limit is %d", len(name), MaxNameBytes)}
	}
	if k, ok := key[name]; ok && !v.IsZero() {
		if !v.Equal(k) {
			return &Problem{Path: name, What: fmt.Sprintf("is %s, but it is a key attribute and the row's key holds %s: leave the key attributes out of the item (the host sets them) or return them unchanged",
				show(v), show(k))}
		}
		return nil
	}
	if v.IsZero() {
		return nil
	}
	if p := value(v, 1); p != nil {
		p.Path = join(name, p.Path)
		return p
	}
	return nil
}

// Value checks one attribute value (an effect, say) as an attribute of
// an item: it returns its first problem, with the path relative to the
// value ("" for the value itself), nil when there is none.
func Value(v abi.Value) *Problem {
	if v.IsZero() {
		return &Problem{What: "has no type (the zero Value); give it one of DynamoDB's types"}
	}
	return value(v, 1)
}

// value checks v at nesting level; the problem's path is relative to v.
func value(v abi.Value, level int) *Problem {
	if level > MaxDepth {
		return &Problem{What: fmt.Sprintf("is nested more than %d levels deep; DynamoDB refuses deeper documents", MaxDepth)}
	}
	switch v.Kind {
	case abi.KindInvalid:
		return &Problem{What: "has no type (the zero Value); give it one of DynamoDB's types"}
	case abi.KindS, abi.KindB, abi.KindBOOL, abi.KindNULL:
		return nil
	case abi.KindN:
		if what := Number(v.Str); what != "" {
			return &Problem{What: fmt.Sprintf("is N %q: %s", v.Str, what)}
		}
	case abi.KindSS:
		return stringSet("SS", v.Strs)
	case abi.KindBS:
		s := make([]string, len(v.Blobs))
		for i, b := range v.Blobs {
			s[i] = string(b)
		}
		return stringSet("BS", s)
	case abi.KindNS:
		return numberSet(v.Strs)
	case abi.KindL:
		for i, e := range v.List {
			if p := value(e, level+1); p != nil {
				p.Path = "[" + strconv.Itoa(i) + "]" + dotted(p.Path)
				return p
			}
		}
	case abi.KindM:
		var first *Problem
		for k, e := range v.Map {
			var p *Problem
			if k == "" {
				p = &Problem{Path: ".", What: "is a map key that is empty; DynamoDB refuses empty attribute names"}
			} else if p = value(e, level+1); p != nil {
				p.Path = join(k, p.Path)
			}
			if p != nil && (first == nil || p.Path < first.Path) {
				first = p
			}
		}
		if first != nil && first.Path == "." {
			first.Path = ""
		}
		return first
	default:
		return &Problem{What: fmt.Sprintf("has unknown type %d", v.Kind)}
	}
	return nil
}

func join(name, rest string) string {
	switch {
	case rest == "":
		return name
	case rest[0] == '[':
		return name + rest
	}
	return name + "." + rest
}

func dotted(rest string) string {
	if rest == "" || rest[0] == '[' {
		return rest
	}
	return "." + rest
}

func stringSet(kind string, members []string) *Problem {
	if len(members) == 0 {
		return &Problem{What: fmt.Sprintf("is an empty %s; DynamoDB stores no empty set (leave the attribute out instead)", kind)}
	}
	dup := func(m string) *Problem {
		return &Problem{What: fmt.Sprintf("is an %s holding %q twice; DynamoDB refuses a set with duplicates", kind, m)}
	}
	if len(members) <= 16 { // a small set: compare pairs, no map
		for i, m := range members {
			for _, o := range members[:i] {
				if m == o {
					return dup(m)
				}
			}
		}
		return nil
	}
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		if seen[m] {
			return dup(m)
		}
		seen[m] = true
	}
	return nil
}

func numberSet(members []string) *Problem {
	if len(members) == 0 {
		return &Problem{What: "is an empty NS; DynamoDB stores no empty set (leave the attribute out instead)"}
	}
	seen := make(map[string]string, len(members))
	for _, m := range members {
		if what := Number(m); what != "" {
			return &Problem{What: fmt.Sprintf("is an NS whose member %q %s", m, what)}
		}
		c := canonical(m)
		if prev, ok := seen[c]; ok {
			return &Problem{What: fmt.Sprintf("is an NS holding the number %s twice (%q and %q); DynamoDB refuses a set with duplicates", c, prev, m)}
		}
		seen[c] = m
	}
	return nil
}

// show renders a key value for a message: its type and value.
func show(v abi.Value) string {
	switch v.Kind {
	case abi.KindS, abi.KindN:
		return fmt.Sprintf("%s %q", v.Kind, v.Str)
	case abi.KindB:
		return fmt.Sprintf("B %q", v.Bytes)
	}
	return v.Kind.String()
}

// Size is an item's size by DynamoDB's rules for the 400 KB limit:
// attribute names and values, strings and binaries their bytes, numbers 1
// byte per two significant digits plus 1, BOOL and NULL 1 byte, lists and
// maps 3 bytes plus 1 per element (and their keys), sets their members.
func Size(item abi.Item) int {
	n := 0
	for k, v := range item {
		n += len(k) + ddbjson.ValueSize(v, numberSize)
	}
	return n
}

// TooLarge returns the problem of an item over MaxItemSize, naming its
// largest attributes; nil when it fits.
func TooLarge(item abi.Item) *Problem {
	n := Size(item)
	if n <= MaxItemSize {
		return nil
	}
	type attr struct {
		name string
		size int
	}
	attrs := make([]attr, 0, len(item))
	for k, v := range item {
		attrs = append(attrs, attr{k, len(k) + ddbjson.ValueSize(v, numberSize)})
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].size > attrs[j].size })
	return &Problem{Path: attrs[0].name, What: fmt.Sprintf("is %d bytes of an item of %d bytes, over DynamoDB's limit of %d (400 KB): keep large or growing data out of the row (bound a list, move details to their own rows or to S3)",
		attrs[0].size, n, MaxItemSize)}
}

func numberSize(s string) int {
	d, _, ok := digits(s)
	if !ok {
		return len(s)
	}
	return (d+1)/2 + 1
}
