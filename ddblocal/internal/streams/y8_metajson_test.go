package streams

import (
	"encoding/json"
	"testing"
	"time"
)

// A stream's stored meta is encoded once and given again while nothing in
// it changed: whatever field changes, the next metaJSON is that field's
// new encoding.
func TestY8_StreamMetaIsEncodedAgainWhenAFieldChanges(t *testing.T) {
	s := &stream{label: "l", table: "t", viewType: ViewNewImage, keySchema: []keyElem{{"pk", "HASH"}},
		created: time.Unix(5, 0), status: StatusEnabled, lastMs: 7}
	check := func(what string) {
		t.Helper()
		want, _ := json.Marshal(streamMeta{Label: s.label, Table: s.table, ViewType: s.viewType, KeySchema: s.keySchema,
			Created: unixNano(s.created), Status: s.status, DisabledAt: unixNano(s.disabledAt), LastMs: s.lastMs})
		for range 2 {
			if got := s.metaJSON(); string(got) != string(want) {
				t.Fatalf("after %s: meta %s, want %s", what, got, want)
			}
		}
	}
	check("the start")
	for _, c := range []struct {
		what   string
		change func()
	}{
		{"a shard's creation", func() { s.lastMs++ }},
		{"a status", func() { s.status = StatusDisabled }},
		{"a disabling time", func() { s.disabledAt = time.Unix(9, 0) }},
		{"a label", func() { s.label = "l2" }},
		{"a table", func() { s.table = "t2" }},
		{"a view type", func() { s.viewType = ViewKeysOnly }},
		{"a key schema", func() { s.keySchema = []keyElem{{"pk", "HASH"}, {"sk", "RANGE"}} }},
		{"a creation time", func() { s.created = time.Unix(6, 0) }},
	} {
		c.change()
		check(c.what)
	}
}
