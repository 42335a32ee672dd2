package swap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
			ts = abi.TestTimestamp // as guesttest.Event stamps them
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

// itemDiff lists how got differs from want; numbers compare by value, as
// DynamoDB compares them ("2.2" is "2.20").
func itemDiff(key string, want, got abi.Item) []string {
	return abi.DiffItems(key, want, alignItem(want, got), renderValue)
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
