package ddblocal

import (
	"context"
	"iter"
	"slices"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func init() { register("Scan", scan) }

type scanInput struct {
	readInput
	Segment       *int
	TotalSegments *int
}

func scan(s *Server, ctx context.Context, body []byte) (any, error) {
	var in scanInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	r, _, err := s.prepareRead(&in.readInput, nil, func() error {
		if in.Segment != nil && in.TotalSegments == nil {
			return apierr.Validation("The TotalSegments parameter is required but was not present in the request when Segment parameter is present")
		}
		if in.TotalSegments != nil && in.Segment == nil {
			return apierr.Validation("The Segment parameter is required but was not present in the request when parameter TotalSegments is present")
		}
		if in.Segment != nil && *in.Segment >= *in.TotalSegments {
			return apierr.Validation("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d", *in.Segment, *in.TotalSegments)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	t := r.src.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, errGone
	}
	seg, total := 0, 1
	if in.TotalSegments != nil {
		seg, total = *in.Segment, *in.TotalSegments
	}
	key := r.src.key()
	inSeg := func(h uint64) bool { return total == 1 || segmentOf(h, total) == seg }
	if r.esk != nil && !inSeg(scanHash(r.esk[key.hash])) {
		return nil, apierr.Validation("The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d", total, seg)
	}
	if err := r.checkNested(&in.readInput); err != nil {
		return nil, err
	}
	if r.src.ix == nil {
		return r.page(t.scanSeq(r.esk, inSeg)), nil
	}
	var cands []abi.Item
	for _, p := range t.indexParts(r.src.ix.IndexName) {
		if inSeg(p.h) {
			cands = append(cands, p.rows...)
		}
	}
	if r.esk != nil {
		names := r.src.posNames()
		eh := scanHash(r.esk[key.hash])
		i := sort.Search(len(cands), func(i int) bool {
			c := cmpScan(scanHash(cands[i][key.hash]), cands[i][key.hash], eh, r.esk[key.hash])
			if c == 0 {
				c = cmpPos(names[1:], cands[i], r.esk)
			}
			return c > 0
		})
		cands = cands[i:]
	}
	return r.page(slices.Values(cands)), nil
}

// scanSeq yields the table's items in scan order (hash key, then range
// key), starting after esk, keeping the partitions inSeg accepts.
func (t *table) scanSeq(esk abi.Item, inSeg func(uint64) bool) iter.Seq[abi.Item] {
	return func(yield func(abi.Item) bool) {
		order := t.scanOrder()
		start := 0
		var hk abi.Value
		if esk != nil {
			hk = esk[t.key.hash]
			eh := scanHash(hk)
			start = sort.Search(len(order), func(j int) bool { return cmpScan(order[j].h, order[j].hk, eh, hk) >= 0 })
		}
		for j := start; j < len(order); j++ {
			p := order[j]
			if !inSeg(p.h) {
				continue
			}
			i := 0
			if esk != nil && cmpVal(p.hk, hk) == 0 {
				if t.key.rng == "" {
					continue
				}
				rv := esk[t.key.rng]
				i = sort.Search(len(p.rks), func(i int) bool { return cmpVal(p.rks[i], rv) > 0 })
			}
			for ; i < len(p.rows); i++ {
				if !yield(p.rows[i]) {
					return
				}
			}
		}
	}
}
