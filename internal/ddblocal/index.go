package ddblocal

import (
	"sort"

	"github.com/dynafold/dynafold/abi"
)

// inIndex reports whether item appears in the index: every index key
// attribute present with the defined type (indexes are sparse).
func (t *table) inIndex(ix *indexDef, item abi.Item) bool {
	for _, n := range schemaKey(ix.KeySchema).names() {
		v, ok := item[n]
		if !ok || v.Kind.String() != t.types[n] {
			return false
		}
	}
	return true
}

// eachIndexItem calls f for every item in the index, in no order.
func (t *table) eachIndexItem(ix *indexDef, f func(abi.Item)) {
	for _, p := range t.order {
		for _, it := range p.rows {
			if t.inIndex(ix, it) {
				f(it)
			}
		}
	}
}

// projectIndex returns the attributes of item the index projects.
func (t *table) projectIndex(ix *indexDef, item abi.Item) abi.Item {
	if ix == nil || ix.Projection.ProjectionType == "ALL" {
		return item
	}
	out := abi.Item{}
	for _, n := range t.key.names() {
		out[n] = item[n]
	}
	for _, n := range schemaKey(ix.KeySchema).names() {
		out[n] = item[n]
	}
	if ix.Projection.ProjectionType == "INCLUDE" {
		for _, n := range ix.Projection.NonKeyAttributes {
			if v, ok := item[n]; ok {
				out[n] = v
			}
		}
	}
	return out
}

// source is what a Query or Scan reads: the table or one of its indexes.
type source struct {
	t  *table
	ix *indexDef // nil: the table
}

// key returns the source's primary key.
func (s source) key() keyDef {
	if s.ix == nil {
		return s.t.key
	}
	return schemaKey(s.ix.KeySchema)
}

// posNames are the attributes that order items in the source and make
// up its LastEvaluatedKey: the source's key, then the table's key.
func (s source) posNames() []string {
	names := s.key().names()
	if s.ix != nil {
		for _, n := range s.t.key.names() {
			if n != names[0] && (len(names) < 2 || n != names[1]) {
				names = append(names, n)
			}
		}
	}
	return names
}

// cmpPos orders two items (or keys) by the source's position attributes.
func cmpPos(names []string, a, b abi.Item) int {
	for _, n := range names {
		if c := cmpVal(a[n], b[n]); c != 0 {
			return c
		}
	}
	return 0
}

// sortPos sorts items by position.
func sortPos(names []string, items []abi.Item) {
	sort.SliceStable(items, func(i, j int) bool { return cmpPos(names, items[i], items[j]) < 0 })
}

// lek builds a LastEvaluatedKey from an item.
func lek(names []string, it abi.Item) abi.Item {
	out := abi.Item{}
	for _, n := range names {
		out[n] = it[n]
	}
	return out
}
