package ddblocal

import (
	"context"
	"slices"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddblocal/apierr"
	"github.com/dynafold/dynafold/internal/ddblocal/expr"
)

func init() { register("Query", query) }

type queryInput struct {
	readInput
	KeyConditionExpression *string
	ScanIndexForward       *bool
}

func query(s *Server, ctx context.Context, body []byte) (any, error) {
	var in queryInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.KeyConditionExpression == nil && len(in.KeyConditions) == 0 {
		var c constraintErrors
		c.checkTableName("tableName", in.TableName)
		if err := c.err(); err != nil {
			return nil, err
		}
		return nil, apierr.Validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	in.isQuery = true
	r, p, err := s.prepareRead(&in.readInput, true)
	if err != nil {
		return nil, err
	}
	kc, err := expr.ParseKeyCondition(*in.KeyConditionExpression, p)
	if err != nil {
		return nil, err
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	t := r.src.t
	key := r.src.key()
	types := map[string]string{}
	for _, n := range key.names() {
		types[n] = t.types[n]
	}
	if err := kc.Validate(key.hash, key.rng, types); err != nil {
		return nil, err
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
		if v := r.esk[key.hash]; cmpVal(v, kc.HashValue) != 0 {
			return nil, apierr.Validation("The provided starting key is outside query boundaries based on provided conditions")
		}
		if kc.Range != nil && !kc.Range.Match(r.esk[key.rng]) {
			return nil, apierr.Validation("The provided starting key does not match the range key predicate")
		}
	}
	reverse := in.ScanIndexForward != nil && !*in.ScanIndexForward
	hv, err := normValue(kc.HashValue)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, errGone
	}
	var cands []abi.Item
	if r.src.ix == nil {
		if p := t.parts[valueKey(hv)]; p != nil {
			cands = p.rows
		}
	} else {
		cands = t.indexRows(r.src.ix.IndexName, hv)
	}
	if kc.Range != nil {
		kept := cands[:0:0]
		for _, it := range cands {
			if kc.Range.Match(it[key.rng]) {
				kept = append(kept, it)
			}
		}
		cands = kept
	}
	if kc.Range == nil {
		cands = slices.Clone(cands)
	}
	if reverse {
		for i, j := 0, len(cands)-1; i < j; i, j = i+1, j-1 {
			cands[i], cands[j] = cands[j], cands[i]
		}
	}
	cands = r.afterESK(cands, reverse)
	return r.page(slices.Values(cands)), nil
}
