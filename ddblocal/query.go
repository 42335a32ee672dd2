package ddblocal

import (
	"context"
	"slices"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
)

func init() { register("Query", query) }

type queryInput struct {
	readInput
	KeyConditionExpression *string
	ScanIndexForward       *bool
}

func query(s *Server, ctx context.Context, body []byte) (any, error) {
	var in queryInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	in.isQuery = true
	r, kcSrc, err := s.prepareRead(&in.readInput, in.KeyConditionExpression, nil)
	if err != nil {
		return nil, err
	}
	t := r.src.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, errGone
	}
	key := r.src.key()
	kc, err := r.checkKey(kcSrc)
	if err != nil {
		return nil, err
	}
	if r.esk != nil {
		if err := r.checkESKTable(); err != nil {
			return nil, err
		}
	}
	if isEmptyScalar(kc.HashValue) {
		return nil, apierr.Validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", emptyKeyWord(kc.HashValue.Kind), key.hash)
	}
	if kc.Range != nil {
		for _, v := range kc.Range.Values {
			if isEmptyScalar(v) && kc.Range.Op != "begins_with" {
				return nil, apierr.Validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", emptyKeyWord(v.Kind), key.rng)
			}
		}
	}
	if r.esk != nil {
		sameHash := cmpVal(r.esk[key.hash], kc.HashValue) == 0
		switch {
		case kc.Range == nil && !sameHash:
			return nil, apierr.Validation("The provided starting key is outside query boundaries based on provided conditions")
		case kc.Range != nil && !kc.Range.Match(r.esk[key.rng]):
			return nil, apierr.Validation("The provided starting key does not match the range key predicate")
		case kc.Range != nil && !sameHash:
			return nil, apierr.Validation("The query can return at most one row and cannot be restarted")
		}
	}
	if r.proj != nil && r.proj.expr != nil {
		if err := t.checkKeyPaths(r.proj.expr.Paths()); err != nil {
			return nil, err
		}
	}
	if err := r.checkFilterKeys(r.in); err != nil {
		return nil, err
	}
	if err := r.checkGSIProjection(r.in); err != nil {
		return nil, err
	}
	if in.FilterExpression != nil {
		if err := t.checkKeyPaths(r.filter.Paths()); err != nil {
			return nil, err
		}
	}
	reverse := in.ScanIndexForward != nil && !*in.ScanIndexForward
	hv, err := normValue(kc.HashValue)
	if err != nil {
		return nil, err
	}
	var cands []abi.Item
	if r.src.ix == nil {
		if p := t.parts[valueKey(hv)]; p != nil {
			cands = p.rows
		}
	} else {
		cands = t.indexRows(r.src.ix.IndexName, hv)
	}
	// Global indexes are always eventually consistent; the table and local
	// indexes are when ConsistentRead is off.
	if s.staleRead(r.consistent && (r.src.ix == nil || !r.src.ix.Global)) {
		cands = t.staleIndexRows(r.src.ix, r.src.posNames(), hv, cands, s.now())
	}
	if kc.Range != nil {
		cands = rangeSlice(cands, key.rng, kc.Range)
	}
	names := r.src.posNames()
	lo, hi := 0, len(cands)
	if r.esk != nil {
		if reverse {
			hi = sort.Search(len(cands), func(i int) bool { return cmpPos(names, cands[i], r.esk) >= 0 })
		} else {
			lo = sort.Search(len(cands), func(i int) bool { return cmpPos(names, cands[i], r.esk) > 0 })
		}
	}
	cands = cands[lo:hi]
	if !reverse {
		return r.page(slices.Values(cands)), nil
	}
	return r.page(func(yield func(abi.Item) bool) {
		for i := len(cands) - 1; i >= 0; i-- {
			if !yield(cands[i]) {
				return
			}
		}
	}), nil
}

// rangeSlice narrows rows (ordered by the range key name) to those the
// sort-key condition accepts; they are contiguous.
func rangeSlice(rows []abi.Item, name string, rc *expr.RangeCond) []abi.Item {
	at := func(v abi.Value, strict bool) int {
		return sort.Search(len(rows), func(i int) bool {
			c := cmpVal(rows[i][name], v)
			return c > 0 || (!strict && c == 0)
		})
	}
	lo, hi := 0, len(rows)
	switch rc.Op {
	case "=":
		lo, hi = at(rc.Values[0], false), at(rc.Values[0], true)
	case "<":
		hi = at(rc.Values[0], false)
	case "<=":
		hi = at(rc.Values[0], true)
	case ">":
		lo = at(rc.Values[0], true)
	case ">=":
		lo = at(rc.Values[0], false)
	case "BETWEEN":
		lo, hi = at(rc.Values[0], false), at(rc.Values[1], true)
		if hi < lo {
			hi = lo
		}
	default: // begins_with: a contiguous run from the prefix on
		lo = at(rc.Values[0], false)
		hi = lo
		for hi < len(rows) && rc.Match(rows[hi][name]) {
			hi++
		}
	}
	return rows[lo:hi]
}
