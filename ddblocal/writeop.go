package ddblocal

import (
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
)

// opKind is the kind of a write.
type opKind int

const (
	opPut opKind = iota
	opDelete
	opUpdate
	opCheck
)

// writeOp is a prepared (validated, parsed) single-item write; eval runs it
// against the current item under the table's lock.
type writeOp struct {
	kind     opKind
	t        *table
	key      abi.Item // the item's key; a put's is its item (see change.key)
	item     abi.Item // opPut
	cond     *expr.Condition
	upd      *expr.Update
	returnRV bool // ReturnValuesOnConditionCheckFailure = ALL_OLD
}

// hoisted marks an error that fails a whole transaction with a
// ValidationException instead of becoming a cancellation reason (DynamoDB
// does so for empty key values).
type hoisted struct{ err error }

func (h *hoisted) Error() string { return h.err.Error() }
func (h *hoisted) Unwrap() error { return h.err }

// condFailure marks a failed condition in eval's results.
type condFailure struct{ old abi.Item }

func (c *condFailure) Error() string { return "The conditional request failed" }

// eval computes the change the write makes. A failed condition returns a
// *condFailure; other errors are validation errors.
func (w *writeOp) eval() (change, error) {
	old := w.t.get(w.key)
	if w.cond != nil {
		ok, err := w.cond.Eval(old)
		if err != nil {
			return change{}, err
		}
		if !ok {
			return change{}, &condFailure{old: old}
		}
	}
	c := change{t: w.t, key: w.key, old: old}
	switch w.kind {
	case opPut:
		c.new = w.item
	case opDelete:
		c.new = nil
	case opCheck:
		c.new = old
	case opUpdate:
		var nw abi.Item
		var err error
		switch {
		case w.upd == nil && old == nil:
			nw = abi.CloneItem(w.key)
		case w.upd == nil:
			nw = old
		case old == nil:
			nw, err = w.upd.ApplyMissing(w.key)
		default:
			nw, err = w.upd.Apply(old)
		}
		if err != nil {
			return change{}, err
		}
		for k, v := range w.key {
			if nv, ok := nw[k]; !ok || !nv.Equal(v) {
				return change{}, apierr.Validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", k)
			}
		}
		if itemSize(nw) > maxItemSize {
			return change{}, apierr.Validation("Item size to update has exceeded the maximum allowed size")
		}
		// Index keys the update changed: a wrong type, or an empty value
		// (which, like every empty key value, fails a whole transaction).
		for _, ix := range w.t.allIndexes() {
			for _, n := range schemaKey(ix.KeySchema).names() {
				v, ok := nw[n]
				if !ok || (old != nil && old[n].Equal(v)) {
					continue
				}
				if v.Kind.String() != w.t.types[n] {
					return change{}, apierr.Validation("The update expression attempted to update the secondary index key to unsupported type")
				}
				if isEmptyScalar(v) {
					return change{}, &hoisted{apierr.Validation("One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty %s value.", emptyKeyWord(v.Kind))}
				}
			}
		}
		c.new = nw
	}
	return c, nil
}

// checkUpdatePaths refuses an update of key attributes as DynamoDB does
// once it knows the table: an update writing (at any depth) a key
// attribute, then one writing an index key with a value of another type,
// then one reading or writing inside a key or index key.
func checkUpdatePaths(t *table, u *expr.Update) error {
	targets := u.Targets()
	for _, n := range t.key.names() {
		for _, tg := range targets {
			if len(tg.Path) > 0 && !tg.Path[0].IsIndex && tg.Path[0].Name == n {
				return apierr.Validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", n)
			}
		}
	}
	for _, ix := range t.indexKeys() {
		for _, tg := range targets {
			if len(tg.Path) == 1 && tg.Path[0].Name == ix.attr && tg.Type != "" && tg.Type != t.types[ix.attr] {
				return apierr.Validation("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s", ix.attr, t.types[ix.attr], tg.Type, ix.index)
			}
		}
	}
	paths := u.OperandPaths()
	for _, tg := range targets {
		paths = append(paths, tg.Path)
	}
	return t.checkKeyPaths(paths)
}

// indexKey is a key attribute of a secondary index.
type indexKey struct{ attr, index string }

// indexKeys returns the key attributes of the table's indexes in the
// order DynamoDB checks them: each global index's keys, then each local
// index's range key.
func (t *table) indexKeys() []indexKey {
	var out []indexKey
	for _, g := range t.meta.GSIs {
		for _, n := range schemaKey(g.KeySchema).names() {
			out = append(out, indexKey{n, g.IndexName})
		}
	}
	for _, l := range t.meta.LSIs {
		if r := schemaKey(l.KeySchema).rng; r != "" {
			out = append(out, indexKey{r, l.IndexName})
		}
	}
	return out
}

// checkKeyPaths refuses a path inside a key attribute (a.b, a[0]) of the
// table or of an index, which DynamoDB's keys, being scalars, do not have.
func (t *table) checkKeyPaths(paths []expr.Path) error {
	nested := map[string]bool{}
	for _, p := range paths {
		if len(p) > 1 && !p[0].IsIndex {
			nested[p[0].Name] = true
		}
	}
	if len(nested) == 0 {
		return nil
	}
	for _, n := range t.key.names() {
		if nested[n] {
			return apierr.Validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: %s", n)
		}
	}
	for _, ix := range t.indexKeys() {
		if nested[ix.attr] {
			return apierr.Validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: %s", ix.attr)
		}
	}
	return nil
}
