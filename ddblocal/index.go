package ddblocal

import (
	"sort"
	"time"

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

// lek builds a LastEvaluatedKey from an item.
func lek(names []string, it abi.Item) abi.Item {
	out := abi.Item{}
	for _, n := range names {
		out[n] = it[n]
	}
	return out
}

// idxPart holds the items of one index hash key, in index order.
type idxPart struct {
	hk   abi.Value
	h    uint64 // scanHash(hk)
	rows []abi.Item
}

// idxStore is a maintained secondary index: its items grouped by index
// hash key, each group ordered by index range key then table key.
type idxStore struct {
	def   indexDef
	names []string // position attributes (source.posNames)
	parts map[string]*idxPart
	count int64
	size  int64
}

// buildIndexes (re)creates every index from the table's items.
func (t *table) buildIndexes() {
	t.idx = map[string]*idxStore{}
	for _, d := range t.allIndexes() {
		d := d
		st := &idxStore{def: d, parts: map[string]*idxPart{}}
		st.names = source{t: t, ix: &st.def}.posNames()
		t.idx[d.IndexName] = st
	}
	for _, p := range t.parts {
		for _, it := range p.rows {
			t.indexAdd(it)
		}
	}
}

func (t *table) indexAdd(item abi.Item) {
	for _, st := range t.idx {
		if !t.inIndex(&st.def, item) {
			continue
		}
		hash := st.names[0]
		k := valueKey(item[hash])
		p := st.parts[k]
		if p == nil {
			p = &idxPart{hk: item[hash], h: scanHash(item[hash])}
			st.parts[k] = p
		}
		i := sort.Search(len(p.rows), func(i int) bool { return cmpPos(st.names, p.rows[i], item) >= 0 })
		p.rows = append(p.rows, nil)
		copy(p.rows[i+1:], p.rows[i:])
		p.rows[i] = item
		st.count++
		st.size += int64(itemSize(item))
	}
}

func (t *table) indexRemove(item abi.Item) {
	for _, st := range t.idx {
		if !t.inIndex(&st.def, item) {
			continue
		}
		k := valueKey(item[st.names[0]])
		p := st.parts[k]
		if p == nil {
			continue
		}
		i := sort.Search(len(p.rows), func(i int) bool { return cmpPos(st.names, p.rows[i], item) >= 0 })
		if i < len(p.rows) && cmpPos(st.names, p.rows[i], item) == 0 {
			p.rows = append(p.rows[:i], p.rows[i+1:]...)
			st.count--
			st.size -= int64(itemSize(item))
			if len(p.rows) == 0 {
				delete(st.parts, k)
			}
		}
	}
}

// indexRows returns the index's items with hash key hv, in index order.
func (t *table) indexRows(name string, hv abi.Value) []abi.Item {
	st := t.idx[name]
	if st == nil {
		return nil
	}
	if p := st.parts[valueKey(hv)]; p != nil {
		return p.rows
	}
	return nil
}

// indexParts returns the index's partitions in scan order.
func (t *table) indexParts(name string) []*idxPart {
	st := t.idx[name]
	if st == nil {
		return nil
	}
	parts := make([]*idxPart, 0, len(st.parts))
	for _, p := range st.parts {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return cmpScan(parts[i].h, parts[i].hk, parts[j].h, parts[j].hk) < 0 })
	return parts
}

// staleIndexRows is rows (a partition of the table, ix nil, or of an index,
// with hash key hv) as an eventually consistent read or a lagging global
// index may still show it: items written within the StaleReads window
// appear in their previous version, or not at all.
func (t *table) staleIndexRows(ix *indexDef, names []string, hv abi.Value, rows []abi.Item, now time.Time) []abi.Item {
	if len(t.stale) == 0 {
		return rows
	}
	hidden := map[string]bool{}
	var out []abi.Item
	for k, e := range t.stale {
		if !now.Before(e.until) {
			continue
		}
		hidden[k] = true
		if e.old != nil && (ix == nil || t.inIndex(ix, e.old)) && cmpVal(e.old[names[0]], hv) == 0 {
			out = append(out, e.old)
		}
	}
	if len(hidden) == 0 {
		return rows
	}
	for _, it := range rows {
		if !hidden[string(encodeKey(t, it))] {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return cmpPos(names, out[i], out[j]) < 0 })
	return out
}
