package guesttest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/itemcheck"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Result is one row after a fold: its key, the item as the host would store
// it (the key's attributes plus to_item's; nil when the row does not exist
// after the fold), the decisions of its events in fold order, and the error
// that failed it (a failed event: "Tag: message").
type Result struct {
	Key       guest.Key
	Item      abi.Item
	Decisions []abi.Decision
	Err       error
}

// Fold folds events through d from an empty read model, as the host folds
// one batch: each event's key, then each row's events in fold order
// (sources in declaration order, then stream id, then version; duplicates
// folded once) in one evolve. A failed event fails its row (in a
// multi-source projection, that source instance's events are dropped and
// the others still fold, as the host does). Results are sorted by key. The
// error is a key that failed or an event no source reads.
func Fold(d guest.Definition, events ...Ev) ([]Result, error) {
	p, err := guest.New(d)
	if err != nil {
		return nil, err
	}
	desc := p.Describe()
	order := map[string]int{}
	for i, s := range desc.Sources {
		order[s.Name] = i
	}
	type row struct {
		key    guest.Key
		events []abi.SourcedEvent
	}
	rows := map[string]*row{}
	seen := map[string]bool{}
	for _, e := range events {
		src := e.Source
		if src == "" {
			for _, s := range desc.Sources {
				if s.Stream == e.Stream {
					src = s.Name
					break
				}
			}
		}
		if _, ok := order[src]; !ok {
			return nil, fmt.Errorf("guesttest: %s %s v%d: no source of %s reads it", e.Stream, e.StreamID, e.Version, desc.Name)
		}
		id := fmt.Sprintf("%s\x00%s\x00%d", src, e.StreamID, e.Version)
		if seen[id] {
			continue // at least once: the host folds a duplicate once
		}
		seen[id] = true
		kr, err := p.Key(&abi.KeyRequest{Source: src, Events: []abi.Event{e.Event}})
		if err != nil {
			return nil, fmt.Errorf("guesttest: key of %s %s v%d: %w", e.Stream, e.StreamID, e.Version, err)
		}
		k := kr.Keys[0]
		if k.Error != nil {
			return nil, fmt.Errorf("guesttest: key of %s %s v%d: %s: %s", e.Stream, e.StreamID, e.Version, k.Error.Tag, k.Error.Message)
		}
		if k.Key == nil {
			continue // the event addresses no row
		}
		ks := KeyString(k.Key)
		r := rows[ks]
		if r == nil {
			r = &row{key: k.Key}
			rows[ks] = r
		}
		r.events = append(r.events, abi.SourcedEvent{Source: src, Event: e.Event})
	}
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		sort.SliceStable(r.events, func(i, j int) bool {
			a, b := r.events[i], r.events[j]
			if oa, ob := order[a.Source], order[b.Source]; oa != ob {
				return oa < ob
			}
			if a.Event.StreamID != b.Event.StreamID {
				return a.Event.StreamID < b.Event.StreamID
			}
			return a.Event.Version < b.Event.Version
		})
		res, err := evolve(p, len(desc.Sources) == 1, r.key, r.events)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	sort.Slice(out, func(i, j int) bool { return KeyString(out[i].Key) < KeyString(out[j].Key) })
	return out, nil
}

func evolve(p *guest.Plugin, single bool, key guest.Key, events []abi.SourcedEvent) (Result, error) {
	res := Result{Key: key}
	var failed []string
	for len(events) > 0 {
		q := &abi.EvolveRequest{Key: key, Events: events}
		if single {
			q.StreamID = events[0].Event.StreamID
		}
		resp, err := p.Evolve(q)
		if err != nil {
			return res, fmt.Errorf("guesttest: evolve of row %s: %w", KeyString(key), err)
		}
		res.Decisions = resp.Decisions
		last := len(resp.Decisions) - 1
		if last < 0 || resp.Decisions[last].Outcome != abi.Failed {
			if err := checkOutput(key, events, resp); err != nil {
				failed = append(failed, err.Error()) // the host fails the row: nothing is written
				break
			}
			if resp.State != nil {
				res.Item = Row(key, resp.Item)
			}
			break
		}
		bad := events[last]
		e := resp.Decisions[last].Error
		failed = append(failed, fmt.Sprintf("%s v%d: %s: %s", bad.Event.Type, bad.Event.Version, e.Tag, e.Message))
		if single {
			break // the row fails: nothing is written
		}
		kept := events[:0:0]
		for _, x := range events {
			if x.Source != bad.Source || x.Event.StreamID != bad.Event.StreamID {
				kept = append(kept, x)
			}
		}
		events = kept
	}
	if failed != nil {
		res.Err = fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return res, nil
}

// checkOutput checks a fold's item and effects against DynamoDB's rules,
// as the host does before it writes them (internal/itemcheck): a number
// DynamoDB cannot store, an empty or duplicated set, an empty attribute
// name, nesting deeper than 32 levels, an item over 400 KB, or key
// attributes that are not the row's fail the row.
func checkOutput(key guest.Key, events []abi.SourcedEvent, resp *abi.EvolveResponse) error {
	var lastApplied abi.Event
	for i, d := range resp.Decisions {
		if d.Outcome != abi.Applied {
			continue
		}
		ev := events[i].Event
		lastApplied = ev
		for j, v := range d.Effects {
			if p := itemcheck.Value(v); p != nil {
				return outputError(ev, fmt.Sprintf("effect %d", j), p)
			}
		}
	}
	if resp.State == nil || resp.Removed {
		return nil
	}
	if p := itemcheck.Item(resp.Item, key); p != nil {
		return outputError(lastApplied, "to_item", p)
	}
	if p := itemcheck.TooLarge(Row(key, resp.Item)); p != nil {
		return outputError(lastApplied, "to_item", p)
	}
	return nil
}

func outputError(ev abi.Event, output string, p *itemcheck.Problem) error {
	attr := "its value"
	if p.Path != "" {
		attr = fmt.Sprintf("attribute %q", p.Path)
	}
	return fmt.Errorf("%s %s v%d (%s): %s returned %s that %s; the host would refuse to write it", ev.Stream, ev.StreamID, ev.Version, ev.Type, output, attr, p.What)
}

// KeyString renders a key as the host's messages do: "pk=a,sk=b",
// attributes sorted.
func KeyString(k abi.Item) string {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n + "=" + k[n].Str)
	}
	return b.String()
}
