package expr

import (
	"sort"

	"github.com/dynafold/dynafold/abi"
)

// Projection is a parsed ProjectionExpression: the document paths to return.
type Projection struct {
	paths []Path
}

// ParseProjection parses a ProjectionExpression: document paths separated
// by commas.
func ParseProjection(src string, params *Params) (*Projection, error) {
	if err := precheck(src, kindProjection); err != nil {
		return nil, err
	}
	p := newParser(src, kindProjection)
	if p.peek().kind == tEOF {
		return nil, emptyError(kindProjection)
	}
	var raws [][]rawElem
	ok := true
	for {
		raw, pok := p.parsePath()
		if !pok {
			ok = false
			break
		}
		raws = append(raws, raw)
		if t := p.peek(); t.kind != tPunct || t.text != "," {
			break
		}
		p.pos++
	}
	if err := p.finish(ok); err != nil {
		return nil, err
	}
	r := newResolver(params, catName, catName)
	proj := &Projection{}
	for _, raw := range raws {
		path := r.path(raw)
		checkOverlap(r, proj.paths, path)
		proj.paths = append(proj.paths, path)
	}
	if err := r.errs.first(kindProjection, catReserved, catName, catOverlap, catConflict); err != nil {
		return nil, err
	}
	return proj, nil
}

// checkOverlap reports path overlapping (one a prefix of the other) or
// conflicting (a name where the other has an index) with an earlier path.
func checkOverlap(r *resolver, earlier []Path, path Path) {
	for _, q := range earlier {
		n := min(len(q), len(path))
		same := true
		for i := 0; i < n; i++ {
			if q[i].IsIndex != path[i].IsIndex {
				r.errs.add(catConflict, "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: %s, path two: %s", pathList(q), pathList(path))
				same = false
				break
			}
			if q[i] != path[i] {
				same = false
				break
			}
		}
		if same {
			r.errs.add(catOverlap, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: %s, path two: %s", pathList(q), pathList(path))
		}
	}
}

// Paths returns the projected paths.
func (p *Projection) Paths() []Path { return p.paths }

// Apply returns the projection of item: nil when item is nil (no item),
// an empty item when the item exists but none of the paths does (DynamoDB
// then answers "Item": {}).
func (p *Projection) Apply(item abi.Item) abi.Item {
	if item == nil {
		return nil
	}
	out := Select(item, p.paths)
	if out == nil {
		out = abi.Item{}
	}
	return out
}

// ptree is a set of paths as a tree.
type ptree struct {
	leaf bool
	keys map[string]*ptree
	idx  map[int]*ptree
}

func (t *ptree) add(path Path) {
	for _, e := range path {
		if t.leaf {
			return
		}
		var next *ptree
		if e.IsIndex {
			if t.idx == nil {
				t.idx = map[int]*ptree{}
			}
			if next = t.idx[e.Index]; next == nil {
				next = &ptree{}
				t.idx[e.Index] = next
			}
		} else {
			if t.keys == nil {
				t.keys = map[string]*ptree{}
			}
			if next = t.keys[e.Name]; next == nil {
				next = &ptree{}
				t.keys[e.Name] = next
			}
		}
		t = next
	}
	t.leaf, t.keys, t.idx = true, nil, nil
}

// extract returns the parts of v selected by t, keeping DynamoDB's nesting:
// map keys stay, selected list elements are packed in index order.
func (t *ptree) extract(v abi.Value) (abi.Value, bool) {
	if t.leaf {
		return v.Clone(), true
	}
	switch v.Kind {
	case abi.KindM:
		out := map[string]abi.Value{}
		for k, sub := range t.keys {
			if cv, ok := v.Map[k]; ok {
				if e, ok := sub.extract(cv); ok {
					out[k] = e
				}
			}
		}
		if len(out) == 0 {
			return abi.Value{}, false
		}
		return abi.M(out), true
	case abi.KindL:
		idx := make([]int, 0, len(t.idx))
		for i := range t.idx {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		var out []abi.Value
		for _, i := range idx {
			if i < len(v.List) {
				if e, ok := t.idx[i].extract(v.List[i]); ok {
					out = append(out, e)
				}
			}
		}
		if len(out) == 0 {
			return abi.Value{}, false
		}
		return abi.L(out...), true
	}
	return abi.Value{}, false
}

// Select returns the parts of item at paths (for projections and for
// UPDATED_OLD / UPDATED_NEW), with DynamoDB's nesting; nil when none exists.
func Select(item abi.Item, paths []Path) abi.Item {
	if item == nil {
		return nil
	}
	root := &ptree{}
	for _, p := range paths {
		if len(p) > 0 && !p[0].IsIndex {
			root.add(p)
		}
	}
	out := abi.Item{}
	for k, sub := range root.keys {
		if v, ok := item[k]; ok {
			if e, ok := sub.extract(v); ok {
				out[k] = e
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
