package swap

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/keys"
)

// Fixture is a plugin's unit test without DynamoDB: events and the rows they
// must give when folded from nothing. It is the smoke test of a candidate
// that has no self_test export, and what `host plugin test` runs.
//
// The events file is a JSON array of events:
//
//	[{"stream": "Order", "streamId": "o-1", "version": 1, "type": "OrderPlaced",
//	  "data": {"customer": {"S": "c-42"}}, "timestamp": "2026-01-01T00:00:00Z"}]
//
// ("source" names the source when two read one stream; "data" and
// "metadata" are items in DynamoDB JSON; data gets "_tag" = type when it
// lacks one). The rows file is a JSON array of items in DynamoDB JSON: each
// row as the plugin produces it, its key plus to_item's attributes (the
// host's own attributes — checkpoint, createdAt, writtenBy — are not part of
// it).
type Fixture struct {
	Name   string     // names the fixture in errors
	Events []SrcEvent // the events, in any order
	Rows   []abi.Item // the rows expected, in any order
}

// SrcEvent is an event with the source that reads it ("" for the source of
// its stream).
type SrcEvent struct {
	Source string
	abi.Event
}

// Row is a row folded by Fold: its key, and the item as the plugin produced
// it (nil when the row does not exist after the fold), or the error that
// failed it.
type Row struct {
	Key  abi.Item
	Item abi.Item
	Err  error
}

type jsonEvent struct {
	Source    string          `json:"source,omitempty"`
	Stream    string          `json:"stream"`
	StreamID  string          `json:"streamId"`
	Version   uint64          `json:"version"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	Timestamp string          `json:"timestamp,omitempty"`
}

// ParseEvents reads an events file's content (see Fixture).
func ParseEvents(b []byte) ([]SrcEvent, error) {
	var raw []jsonEvent
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	out := make([]SrcEvent, len(raw))
	for i, r := range raw {
		if r.Stream == "" || r.StreamID == "" || r.Version == 0 || r.Type == "" {
			return nil, fmt.Errorf("events[%d]: stream, streamId, version (from 1) and type are required", i)
		}
		data, err := ddbjson.ItemFromJSON(r.Data)
		if err != nil {
			return nil, fmt.Errorf("events[%d].data: %w", i, err)
		}
		if data == nil {
			data = abi.Item{}
		}
		if _, ok := data["_tag"]; !ok {
			data["_tag"] = abi.S(r.Type)
		}
		meta, err := ddbjson.ItemFromJSON(r.Metadata)
		if err != nil {
			return nil, fmt.Errorf("events[%d].metadata: %w", i, err)
		}
		ts := r.Timestamp
		if ts == "" {
			ts = "1970-01-01T00:00:00Z"
		}
		out[i] = SrcEvent{Source: r.Source, Event: abi.Event{Stream: r.Stream, StreamID: r.StreamID, Version: r.Version,
			Type: r.Type, Data: data, Metadata: meta, Timestamp: ts}}
	}
	return out, nil
}

// ParseRows reads a rows file's content (see Fixture).
func ParseRows(b []byte) ([]abi.Item, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	out := make([]abi.Item, 0, len(raw))
	for i, r := range raw {
		it, err := ddbjson.ItemFromJSON(r)
		if err != nil || it == nil {
			return nil, fmt.Errorf("rows[%d]: an item in DynamoDB JSON is required: %v", i, err)
		}
		out = append(out, it)
	}
	return out, nil
}

// LoadFixture reads a fixture from an events file and a rows file.
func LoadFixture(eventsPath, rowsPath string) (*Fixture, error) {
	eb, err := os.ReadFile(eventsPath)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	evs, err := ParseEvents(eb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", eventsPath, err)
	}
	rb, err := os.ReadFile(rowsPath)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	rows, err := ParseRows(rb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rowsPath, err)
	}
	return &Fixture{Name: filepath.Base(eventsPath), Events: evs, Rows: rows}, nil
}

// Fold runs events through l as the engine would over empty tables: key
// per source, then one evolve per row from no state, in fold order (sources
// in declaration order, then stream id, then version; duplicates dropped).
// An instance whose event fails leaves the fold, as in the engine; a row
// whose instances all fail carries the error. Rows come back sorted by key.
func Fold(ctx context.Context, l logic.Logic, events []SrcEvent) ([]Row, error) {
	d := l.Describe()
	order := map[string]int{}
	byStream := map[string]string{}
	for i, s := range d.Sources {
		order[s.Name] = i
		if _, dup := byStream[s.Stream]; !dup {
			byStream[s.Stream] = s.Name
		}
	}
	bySource := map[string][]abi.Event{}
	seen := map[string]bool{}
	for i, e := range events {
		src := e.Source
		if src == "" {
			src = byStream[e.Stream]
		}
		if _, ok := order[src]; !ok {
			return nil, fmt.Errorf("event %d (%s %s v%d): the plugin has no source for it (sources: %s)", i, e.Stream, e.StreamID, e.Version, sourcesText(d.Sources))
		}
		id := fmt.Sprintf("%s|%s|%d", src, e.StreamID, e.Version)
		if seen[id] {
			continue
		}
		seen[id] = true
		bySource[src] = append(bySource[src], e.Event)
	}
	type rowAcc struct {
		key    abi.Item
		events []abi.SourcedEvent
	}
	rows := map[string]*rowAcc{}
	for _, s := range d.Sources {
		evs := bySource[s.Name]
		if len(evs) == 0 {
			continue
		}
		slices.SortStableFunc(evs, func(a, b abi.Event) int {
			return cmp.Or(cmp.Compare(a.StreamID, b.StreamID), cmp.Compare(a.Version, b.Version))
		})
		resp, err := l.Key(ctx, &abi.KeyRequest{Source: s.Name, Events: evs})
		if err != nil {
			return nil, fmt.Errorf("key (source %s): %w", s.Name, err)
		}
		for i, k := range resp.Keys {
			if k.Error != nil {
				return nil, fmt.Errorf("key of %s %s v%d: %v", evs[i].Stream, evs[i].StreamID, evs[i].Version, k.Error)
			}
			if k.Key == nil {
				continue
			}
			ks := KeyString(k.Key)
			r := rows[ks]
			if r == nil {
				r = &rowAcc{key: k.Key}
				rows[ks] = r
			}
			r.events = append(r.events, abi.SourcedEvent{Source: s.Name, Event: evs[i]})
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		r := rows[k]
		row := Row{Key: r.key}
		row.Item, row.Err = foldRow(ctx, l, r.key, r.events, len(d.Sources) == 1)
		out = append(out, row)
	}
	return out, nil
}

// foldRow folds one row's events from no state, dropping a failed
// instance's events and folding again, as the engine does (SPEC M6).
func foldRow(ctx context.Context, l logic.Logic, key abi.Item, evs []abi.SourcedEvent, single bool) (abi.Item, error) {
	for {
		req := &abi.EvolveRequest{Key: key, Events: evs}
		if single && oneInstance(evs) { // as the engine: one source instance
			req.StreamID = evs[0].Event.StreamID
		}
		resp, err := l.Evolve(ctx, req)
		if err != nil {
			return nil, err
		}
		n := len(resp.Decisions)
		if n == 0 || n > len(evs) {
			return nil, fmt.Errorf("evolve returned %d decisions for %d events", n, len(evs))
		}
		if last := resp.Decisions[n-1]; last.Outcome == abi.Failed {
			bad := evs[n-1]
			keep := evs[:0:0]
			for _, e := range evs {
				if e.Source != bad.Source || e.Event.StreamID != bad.Event.StreamID {
					keep = append(keep, e)
				}
			}
			if len(keep) == 0 {
				return nil, fmt.Errorf("evolve failed on %s %s v%d: %v", bad.Event.Stream, bad.Event.StreamID, bad.Event.Version, last.Error)
			}
			evs = keep
			continue
		}
		if n < len(evs) {
			return nil, fmt.Errorf("evolve returned %d decisions for %d events without a failed one", n, len(evs))
		}
		if resp.State == nil || resp.Item == nil {
			return nil, nil
		}
		it := abi.CloneItem(resp.Item)
		for k, v := range key {
			it[k] = v
		}
		return it, nil
	}
}

func oneInstance(evs []abi.SourcedEvent) bool {
	for _, e := range evs[1:] {
		if e.Source != evs[0].Source || e.Event.StreamID != evs[0].Event.StreamID {
			return false
		}
	}
	return true
}

// Run folds the fixture's events through l and compares the rows with the
// expected ones: one message per difference, none when they agree.
func (f *Fixture) Run(ctx context.Context, l logic.Logic) ([]string, error) {
	got, err := Fold(ctx, l, f.Events)
	if err != nil {
		return nil, err
	}
	return CompareRows(got, f.Rows), nil
}

// CompareRows compares folded rows with expected items, matching them by the
// folded rows' key attributes: one message per missing, unexpected or
// different row.
func CompareRows(got []Row, want []abi.Item) []string {
	var diffs []string
	byKey := map[string]Row{}
	var keyAttrs []string
	for _, r := range got {
		byKey[KeyString(r.Key)] = r
		if keyAttrs == nil {
			for k := range r.Key {
				keyAttrs = append(keyAttrs, k)
			}
		}
	}
	matched := map[string]bool{}
	for i, w := range want {
		key := abi.Item{}
		for _, a := range keyAttrs {
			if v, ok := w[a]; ok {
				key[a] = v
			}
		}
		ks := KeyString(key)
		r, ok := byKey[ks]
		switch {
		case !ok || len(keyAttrs) == 0:
			diffs = append(diffs, fmt.Sprintf("row %d %s: expected, but no event folds into it", i, render(key)))
			continue
		case r.Err != nil:
			diffs = append(diffs, fmt.Sprintf("row %s: failed: %v", ks, r.Err))
		case r.Item == nil:
			diffs = append(diffs, fmt.Sprintf("row %s: expected, but the fold leaves it absent", ks))
		default:
			diffs = append(diffs, itemDiff(ks, w, r.Item)...)
		}
		matched[ks] = true
	}
	for _, r := range got {
		ks := KeyString(r.Key)
		if !matched[ks] && (r.Item != nil || r.Err != nil) {
			if r.Err != nil {
				diffs = append(diffs, fmt.Sprintf("row %s: not expected, and failed: %v", ks, r.Err))
			} else {
				diffs = append(diffs, fmt.Sprintf("row %s: not expected, got %s", ks, render(r.Item)))
			}
		}
	}
	return diffs
}

func itemDiff(key string, want, got abi.Item) []string {
	var diffs []string
	names := map[string]bool{}
	for k := range want {
		names[k] = true
	}
	for k := range got {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !gok:
			diffs = append(diffs, fmt.Sprintf("row %s: %s missing, want %s", key, k, renderValue(w)))
		case !wok:
			diffs = append(diffs, fmt.Sprintf("row %s: %s = %s not expected", key, k, renderValue(g)))
		case !w.Equal(g):
			diffs = append(diffs, fmt.Sprintf("row %s: %s = %s, want %s", key, k, renderValue(g), renderValue(w)))
		}
	}
	return diffs
}

// KeyString renders a key canonically ("pk=a,sk=b", attributes sorted), for
// maps and messages: the form the host's errors and logs show.
func KeyString(k abi.Item) string { return keys.String(k) }

func render(it abi.Item) string {
	b, err := ddbjson.ItemToJSON(it)
	if err != nil {
		return fmt.Sprintf("%v", it)
	}
	return string(b)
}

func renderValue(v abi.Value) string {
	b, err := ddbjson.ValueToJSON(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return strings.TrimSpace(string(b))
}
