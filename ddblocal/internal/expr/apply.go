package expr

import (
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Apply returns the item after the update; the input is not modified and
// may be nil (a new item). Every right-hand side is evaluated against the
// item as it was before the update. Errors are DynamoDB's runtime
// ValidationExceptions (a missing attribute on the right, wrong operand
// types, an invalid document path).
func (u *Update) Apply(item abi.Item) (abi.Item, error) {
	return u.apply(item, len(item) == 0)
}

// ApplyMissing applies the update to an item that does not exist yet: the
// result starts from a copy of key (the request's key attributes), and, as
// DynamoDB does for a missing item, REMOVE and DELETE of paths whose parent
// is absent are ignored instead of being errors. Call it instead of Apply
// when UpdateItem finds no item.
func (u *Update) ApplyMissing(key abi.Item) (abi.Item, error) {
	return u.apply(key, true)
}

func (u *Update) apply(item abi.Item, missingItem bool) (abi.Item, error) {
	// Right-hand sides read the item as it was (for a missing item: its key).
	old := item
	out := abi.CloneItem(item)
	if out == nil {
		out = abi.Item{}
	}
	// Evaluate all SET values first, against the old item.
	vals := make([]abi.Value, len(u.actions))
	for i, a := range u.actions {
		if a.typ != aSet {
			continue
		}
		v, err := evalSetVal(a.val, old)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	// Actions that append to a list (SET or ADD of an element past its
	// end) append in element order, whatever clause and place they were
	// written in: DynamoDB applies them in index order. Actions on other
	// paths are independent of each other.
	var order, rest []int
	for i, a := range u.actions {
		if a.typ != aRemove {
			order = append(order, i)
		} else {
			rest = append(rest, i)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		return pathAfter(u.actions[order[j]].path, u.actions[order[i]].path)
	})
	order = append(order, rest...)
	var removes []Path
	for _, i := range order {
		a := u.actions[i]
		var err error
		switch a.typ {
		case aSet:
			err = setAt(out, a.path, vals[i])
		case aRemove:
			removes = append(removes, a.path)
		case aAdd:
			if a.legacy {
				err = legacyAdd(out, a.path, a.arg.val)
			} else {
				err = addAt(out, a.path, a.arg.val)
			}
		case aDelete:
			if a.legacy {
				err = legacyDelete(out, a.path, a.arg.val)
			} else {
				err = deleteAt(out, a.path, a.arg.val, missingItem)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	// Remove list elements from the highest index down (and inside an
	// element before removing elements before it), so that indices keep
	// referring to the lists as they were.
	sort.SliceStable(removes, func(i, j int) bool { return pathAfter(removes[i], removes[j]) })
	for _, p := range removes {
		if err := removeAt(out, p, missingItem); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pathAfter orders paths descending, element by element (higher indices
// first); removals in that order never shift an index still to be used.
func pathAfter(a, b Path) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x.IsIndex && y.IsIndex {
			return x.Index > y.Index
		}
		return x.Name > y.Name
	}
	return len(a) > len(b)
}

func validation(msg string) error { return apierr.Validation("%s", msg) }

// evalSetVal evaluates the right side of a SET action.
func evalSetVal(v *setVal, item abi.Item) (abi.Value, error) {
	a, err := evalUpdateOperand(v.a, item)
	if err != nil || v.op == "" {
		return a, err
	}
	b, err := evalUpdateOperand(v.b, item)
	if err != nil {
		return abi.Value{}, err
	}
	if a.Kind != abi.KindN || b.Kind != abi.KindN {
		return abi.Value{}, validation(msgBadOperandType)
	}
	var s string
	if v.op == "+" {
		s, err = AddNumbers(a.Str, b.Str)
	} else {
		s, err = SubNumbers(a.Str, b.Str)
	}
	if err != nil {
		return abi.Value{}, err
	}
	return abi.N(s), nil
}

// evalUpdateOperand evaluates a path, :value, if_not_exists or list_append.
func evalUpdateOperand(o *operand, item abi.Item) (abi.Value, error) {
	switch o.typ {
	case opValue:
		return o.val.Clone(), nil
	case opPath:
		v, ok := lookup(item, o.path)
		if !ok {
			return abi.Value{}, validation(msgMissingAttr)
		}
		return v.Clone(), nil
	}
	switch o.name {
	case "if_not_exists":
		if v, ok := lookup(item, o.args[0].path); ok {
			return v.Clone(), nil
		}
		return evalUpdateOperand(o.args[1], item)
	case "list_append":
		a, err := evalUpdateOperand(o.args[0], item)
		if err != nil {
			return abi.Value{}, err
		}
		b, err := evalUpdateOperand(o.args[1], item)
		if err != nil {
			return abi.Value{}, err
		}
		if a.Kind != abi.KindL || b.Kind != abi.KindL {
			return abi.Value{}, validation(msgBadOperandType)
		}
		l := make([]abi.Value, 0, len(a.List)+len(b.List))
		return abi.L(append(append(l, a.List...), b.List...)...), nil
	}
	return abi.Value{}, validation(msgBadOperandType)
}

// setAt stores x at path in item. The parent of a nested path must exist
// and be a map (for a name) or a list (for an index); an index past the end
// of a list appends.
func setAt(item abi.Item, path Path, x abi.Value) error {
	name := path[0].Name
	if len(path) == 1 {
		item[name] = x
		return nil
	}
	cur, ok := item[name]
	if !ok {
		return validation(msgInvalidPath)
	}
	v, err := setIn(cur, path[1:], x)
	if err != nil {
		return err
	}
	item[name] = v
	return nil
}

func setIn(cur abi.Value, rest Path, x abi.Value) (abi.Value, error) {
	e := rest[0]
	if e.IsIndex {
		if cur.Kind != abi.KindL {
			return cur, validation(msgInvalidPath)
		}
		if len(rest) == 1 {
			if e.Index >= len(cur.List) {
				cur.List = append(cur.List, x)
			} else {
				cur.List[e.Index] = x
			}
			return cur, nil
		}
		if e.Index >= len(cur.List) {
			return cur, validation(msgInvalidPath)
		}
		child, err := setIn(cur.List[e.Index], rest[1:], x)
		if err != nil {
			return cur, err
		}
		cur.List[e.Index] = child
		return cur, nil
	}
	if cur.Kind != abi.KindM {
		return cur, validation(msgInvalidPath)
	}
	if cur.Map == nil {
		cur.Map = map[string]abi.Value{}
	}
	if len(rest) == 1 {
		cur.Map[e.Name] = x
		return cur, nil
	}
	child, ok := cur.Map[e.Name]
	if !ok {
		return cur, validation(msgInvalidPath)
	}
	child, err := setIn(child, rest[1:], x)
	if err != nil {
		return cur, err
	}
	cur.Map[e.Name] = child
	return cur, nil
}

// removeAt removes the value at path. A missing last element (a map key,
// an index past the end) is no error, but the parent must exist and be a
// map (for a name) or a list (for an index) - except in a missing item,
// where DynamoDB ignores any REMOVE.
func removeAt(item abi.Item, path Path, missingItem bool) error {
	if missingItem {
		return nil
	}
	name := path[0].Name
	if len(path) == 1 {
		delete(item, name)
		return nil
	}
	cur, ok := item[name]
	if !ok {
		return validation(msgInvalidPath)
	}
	v, err := removeIn(cur, path[1:])
	if err != nil {
		return err
	}
	item[name] = v
	return nil
}

func removeIn(cur abi.Value, rest Path) (abi.Value, error) {
	e := rest[0]
	if e.IsIndex {
		if cur.Kind != abi.KindL {
			return cur, validation(msgInvalidPath)
		}
		if e.Index >= len(cur.List) {
			if len(rest) == 1 {
				return cur, nil
			}
			return cur, validation(msgInvalidPath)
		}
		if len(rest) == 1 {
			l := make([]abi.Value, 0, len(cur.List)-1)
			l = append(l, cur.List[:e.Index]...)
			cur.List = append(l, cur.List[e.Index+1:]...)
			return cur, nil
		}
		v, err := removeIn(cur.List[e.Index], rest[1:])
		cur.List[e.Index] = v
		return cur, err
	}
	if cur.Kind != abi.KindM {
		return cur, validation(msgInvalidPath)
	}
	if len(rest) == 1 {
		delete(cur.Map, e.Name)
		return cur, nil
	}
	child, ok := cur.Map[e.Name]
	if !ok {
		return cur, validation(msgInvalidPath)
	}
	v, err := removeIn(child, rest[1:])
	cur.Map[e.Name] = v
	return cur, err
}

// addAt is ADD: a number is added to a number, set members to a set of the
// same type; an absent attribute becomes the value.
func addAt(item abi.Item, path Path, x abi.Value) error {
	cur, ok := lookup(item, path)
	if !ok {
		return setAt(item, path, x.Clone())
	}
	switch {
	case cur.Kind == abi.KindN && x.Kind == abi.KindN:
		s, err := AddNumbers(cur.Str, x.Str)
		if err != nil {
			return err
		}
		return setAt(item, path, abi.N(s))
	case isSet(cur.Kind) && cur.Kind == x.Kind:
		return setAt(item, path, setUnion(cur, x))
	}
	return validation(msgBadOperandType)
}

// deleteAt is DELETE: the members of x leave the set; an emptied set is
// removed; an absent attribute is no error.
func deleteAt(item abi.Item, path Path, x abi.Value, missingItem bool) error {
	cur, ok := lookup(item, path)
	if !ok {
		if len(path) > 1 && !missingItem {
			if parent, ok := lookup(item, path[:len(path)-1]); !ok || !fits(parent, path[len(path)-1]) {
				return validation(msgInvalidPath)
			}
		}
		return nil
	}
	if !isSet(cur.Kind) || cur.Kind != x.Kind {
		return validation(msgBadOperandType)
	}
	d := setDiff(cur, x)
	if setLen(d) == 0 {
		return removeAt(item, path, false)
	}
	return setAt(item, path, d)
}

// fits reports whether container can hold path element e (a map for a
// name, a list for an index).
func fits(container abi.Value, e PathElem) bool {
	if e.IsIndex {
		return container.Kind == abi.KindL
	}
	return container.Kind == abi.KindM
}

func isSet(k abi.Kind) bool { return k == abi.KindSS || k == abi.KindNS || k == abi.KindBS }

func setLen(v abi.Value) int {
	if v.Kind == abi.KindBS {
		return len(v.Blobs)
	}
	return len(v.Strs)
}

// memberKeys returns comparable keys of a set's members (numbers canonical).
func memberKeys(v abi.Value) []string {
	switch v.Kind {
	case abi.KindBS:
		out := make([]string, len(v.Blobs))
		for i, b := range v.Blobs {
			out[i] = string(b)
		}
		return out
	case abi.KindNS:
		out := make([]string, len(v.Strs))
		for i, s := range v.Strs {
			out[i] = numberKey(s)
		}
		return out
	}
	return v.Strs
}

func setUnion(a, b abi.Value) abi.Value {
	out := a.Clone()
	have := map[string]bool{}
	for _, k := range memberKeys(a) {
		have[k] = true
	}
	bk := memberKeys(b)
	for i, k := range bk {
		if have[k] {
			continue
		}
		have[k] = true
		if b.Kind == abi.KindBS {
			out.Blobs = append(out.Blobs, append([]byte(nil), b.Blobs[i]...))
		} else {
			out.Strs = append(out.Strs, b.Strs[i])
		}
	}
	return out
}

func setDiff(a, b abi.Value) abi.Value {
	drop := map[string]bool{}
	for _, k := range memberKeys(b) {
		drop[k] = true
	}
	out := abi.Value{Kind: a.Kind}
	for i, k := range memberKeys(a) {
		if drop[k] {
			continue
		}
		if a.Kind == abi.KindBS {
			out.Blobs = append(out.Blobs, append([]byte(nil), a.Blobs[i]...))
		} else {
			out.Strs = append(out.Strs, a.Strs[i])
		}
	}
	return out
}
