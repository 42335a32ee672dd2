package host

import (
	"context"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// SampleReport is what WhatIfSample found.
type SampleReport struct {
	// Rows are the sampled rows: what the candidate makes beside what the
	// table holds (WhatIf's rows).
	Rows []WhatIfRow
	// Compared counts the rows both the table holds (a row, not a
	// tombstone) and the candidate makes; Differ those of them whose
	// attributes differ, and Failed the rows the candidate fails.
	Compared, Differ, Failed int
	// Dropped lists the attributes of the stored rows compared that none
	// of the candidate's rows has (the host's own attributes aside), sorted
	// by name: a state field renamed or dropped.
	Dropped []DroppedAttr
	// WrittenBy lists the plugin versions (name@version) that wrote the
	// compared rows, sorted; empty when the projection records none.
	WrittenBy []string
}

// DroppedAttr is an attribute of the stored rows the candidate does not
// write: Stored rows of the sample hold it.
type DroppedAttr struct {
	Name   string
	Stored int
}

// WhatIfSample is WhatIf over a sample of the projection's rows, for a
// check before a swap: the first stream instances the event table's scan
// meets (up to n of each source's stream) are each folded through the
// candidate from their first event, as WhatIf folds a stream id, and the
// rows they make (at most n) are compared with the rows the table holds
// now. Nothing is written.
func (h *Host) WhatIfSample(ctx context.Context, projection, plugin string, n int) (SampleReport, error) {
	rows, err := h.whatIfSample(ctx, projection, plugin, n)
	if err != nil {
		return SampleReport{}, err
	}
	rep := SampleReport{Rows: rows}
	pc := h.cfg.projection(projection)
	ignore := map[string]bool{}
	for _, a := range pc.provenanceAttrs() {
		ignore[a] = true
	}
	stored, made := map[string]int{}, map[string]int{}
	writers := map[string]bool{}
	for _, r := range rows {
		if r.Err != nil {
			rep.Failed++
			continue
		}
		if r.Current == nil || apply.IsTombstone(r.Current) || r.Would == nil {
			continue
		}
		rep.Compared++
		if len(r.Changes) > 0 {
			rep.Differ++
		}
		for a := range r.Current {
			if !ignore[a] {
				stored[a]++
			}
		}
		for a := range r.Would {
			made[a]++
		}
		if pc.WrittenBy != "" {
			if wb := r.Current[pc.WrittenBy]; wb.Str != "" {
				writers[wb.Str] = true
			}
		}
	}
	for a, c := range stored {
		if made[a] == 0 {
			rep.Dropped = append(rep.Dropped, DroppedAttr{Name: a, Stored: c})
		}
	}
	sort.Slice(rep.Dropped, func(i, j int) bool { return rep.Dropped[i].Name < rep.Dropped[j].Name })
	for w := range writers {
		rep.WrittenBy = append(rep.WrittenBy, w)
	}
	sort.Strings(rep.WrittenBy)
	return rep, nil
}

func (h *Host) whatIfSample(ctx context.Context, projection, plugin string, n int) ([]WhatIfRow, error) {
	live, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	var refs []apply.InstanceRef
	for _, src := range live.Projection().Sources {
		ids, err := h.firstStreamIDs(ctx, src.Stream, n)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			refs = append(refs, apply.InstanceRef{Source: src.Name, StreamID: id})
		}
	}
	return h.whatIf(ctx, projection, plugin, func(e *apply.Engine) ([]apply.Outcome, error) {
		var rows []apply.Outcome
		seen := map[string]bool{}
		for _, ref := range refs {
			if len(rows) >= n {
				break
			}
			outs, err := e.RebuildInstance(ctx, ref)
			if err != nil {
				return nil, err
			}
			for _, o := range outs {
				if k := keys.String(o.Key); !seen[k] && len(rows) < n {
					seen[k] = true
					rows = append(rows, o)
				}
			}
		}
		return rows, nil
	})
}

// firstStreamIDs returns up to n ids of a stream's instances, the first
// the event table's scan meets.
func (h *Host) firstStreamIDs(ctx context.Context, stream string, n int) ([]string, error) {
	st, err := h.stream(stream)
	if err != nil {
		return nil, err
	}
	l := h.es.Layout()
	items := &eventItems{layout: l, stream: st}
	sc := store.Scan{
		Table: h.es.Table(), Filter: "#m = :m", Projection: "#id, #v, #pk, #sk",
		Names: map[string]string{"#m": eventstore.AttrMarker, "#id": eventstore.AttrStreamID, "#v": eventstore.AttrVersion,
			"#pk": l.PKName(), "#sk": l.SKName()},
		Values: map[string]abi.Value{":m": abi.S(l.Marker(stream))},
	}
	seen := map[string]bool{}
	var ids []string
	for len(ids) < n {
		page, err := h.db.Scan(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("scanning the event store for %s streams: %w", stream, err)
		}
		for _, it := range page.Items {
			if !items.check(it) {
				continue
			}
			if id := it[eventstore.AttrStreamID].Str; !seen[id] && len(ids) < n {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if page.LastKey == nil {
			break
		}
		sc.StartKey = page.LastKey
	}
	return ids, nil
}
