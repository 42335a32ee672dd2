package host

import (
	"sort"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
)

// itemDiff returns the attribute paths where two items differ, the
// attributes in ignore left out: a map is compared entry by entry
// ("a.b"), a list of the same length element by element ("a[2]"); any
// other difference is the whole value's. A nil item has no attributes.
func itemDiff(stored, fold abi.Item, ignore map[string]bool) []AttrDiff {
	var out []AttrDiff
	for _, n := range unionNames(stored, fold) {
		if ignore[n] {
			continue
		}
		a, oka := stored[n]
		b, okb := fold[n]
		out = valueDiff(out, pathName("", n), a, oka, b, okb)
	}
	sortDiffs(out)
	return out
}

func valueDiff(out []AttrDiff, path string, a abi.Value, oka bool, b abi.Value, okb bool) []AttrDiff {
	switch {
	case oka && okb && a.Equal(b):
		return out
	case oka && okb && a.Kind == abi.KindM && b.Kind == abi.KindM:
		for _, n := range unionNames(a.Map, b.Map) {
			x, okx := a.Map[n]
			y, oky := b.Map[n]
			out = valueDiff(out, pathName(path, n), x, okx, y, oky)
		}
		return out
	case oka && okb && a.Kind == abi.KindL && b.Kind == abi.KindL && len(a.List) == len(b.List):
		for i := range a.List {
			out = valueDiff(out, path+"["+strconv.Itoa(i)+"]", a.List[i], true, b.List[i], true)
		}
		return out
	}
	d := AttrDiff{Path: path}
	if oka {
		d.Stored = &a
	}
	if okb {
		d.Fold = &b
	}
	return append(out, d)
}

// pathName appends a map key to a path: "a.b", or "a[\"b.c\"]" when the
// name holds a character a path uses.
func pathName(path, name string) string {
	if name == "" || strings.ContainsAny(name, ".[]\"") {
		return path + "[" + strconv.Quote(name) + "]"
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

func unionNames(a, b abi.Item) []string {
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func sortDiffs(ds []AttrDiff) {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Path < ds[j].Path })
}
