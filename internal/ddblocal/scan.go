package ddblocal

import (
	"context"
	"hash/fnv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddblocal/apierr"
)

func init() { register("Scan", scan) }

type scanInput struct {
	readInput
	Segment       *int
	TotalSegments *int
}

func scan(s *Server, ctx context.Context, body []byte) (any, error) {
	var in scanInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	if in.TotalSegments != nil && (*in.TotalSegments < 1 || *in.TotalSegments > 1000000) {
		if *in.TotalSegments < 1 {
			c.add("Value '" + itoa(*in.TotalSegments) + "' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1")
		} else {
			c.add("Value '" + itoa(*in.TotalSegments) + "' at 'totalSegments' failed to satisfy constraint: Member must have value less than or equal to 1000000")
		}
	}
	if in.Segment != nil && *in.Segment < 0 {
		c.add("Value '" + itoa(*in.Segment) + "' at 'segment' failed to satisfy constraint: Member must have value greater than or equal to 0")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if in.Segment != nil && in.TotalSegments == nil {
		return nil, apierr.Validation("The TotalSegments parameter is required but was not present in the request when Segment parameter is present")
	}
	if in.TotalSegments != nil && in.Segment == nil {
		return nil, apierr.Validation("The Segment parameter is required but was not present in the request when parameter TotalSegments is present")
	}
	if in.Segment != nil && *in.Segment >= *in.TotalSegments {
		return nil, apierr.Validation("The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d", *in.Segment, *in.TotalSegments)
	}
	r, p, err := s.prepareRead(&in.readInput, false)
	if err != nil {
		return nil, err
	}
	if err := p.CheckUnused(); err != nil {
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
	inSeg := func(hk abi.Value) bool {
		if total == 1 {
			return true
		}
		h := fnv.New32a()
		h.Write([]byte(valueKey(hk)))
		return int(h.Sum32()%uint32(total)) == seg
	}
	var cands []abi.Item
	if r.src.ix == nil {
		for _, p := range t.order {
			if !inSeg(p.hk) {
				continue
			}
			cands = append(cands, p.rows...)
		}
	} else {
		t.eachIndexItem(r.src.ix, func(it abi.Item) {
			if inSeg(it[key.hash]) {
				cands = append(cands, it)
			}
		})
		sortPos(r.src.posNames(), cands)
	}
	cands = r.afterESK(cands, false)
	return r.page(cands), nil
}
