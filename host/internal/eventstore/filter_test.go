package eventstore

import (
	"encoding/json"
	"testing"
)

// matches applies the subset of Lambda's filter rules the pattern uses: a
// JSON object matches when every key matches, a list of values matches when
// the record's value is one of them.
func matches(pattern, record any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		r, ok := record.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			if !matches(v, r[k]) {
				return false
			}
		}
		return true
	case []any:
		for _, v := range p {
			if v == record {
				return true
			}
		}
	}
	return false
}

func TestES5_FilterCriteriaKeepOnlyTheseStreamsEventInserts(t *testing.T) {
	l := DefaultLayout("shop", 1)
	b, err := l.FilterCriteria(Stream{Name: "Order", Composite: []string{"orderId"}}, Stream{Name: "Sensor", Composite: []string{"sensorId"}})
	if err != nil {
		t.Fatal(err)
	}
	var fc struct{ Filters []struct{ Pattern string } }
	if err := json.Unmarshal(b, &fc); err != nil || len(fc.Filters) != 1 {
		t.Fatalf("FilterCriteria = %s (%v)", b, err)
	}
	var pattern any
	if err := json.Unmarshal([]byte(fc.Filters[0].Pattern), &pattern); err != nil {
		t.Fatalf("the pattern is not JSON: %v", err)
	}
	record := func(name, marker string) any {
		var r any
		js := `{"eventName":"` + name + `","dynamodb":{"NewImage":{"__edd_e__":{"S":"` + marker + `"}}}}`
		_ = json.Unmarshal([]byte(js), &r)
		return r
	}
	cases := []struct {
		rec  any
		keep bool
	}{
		{record("INSERT", l.Marker("Order")), true},
		{record("INSERT", l.Marker("Sensor")), true},
		{record("INSERT", l.Marker("Payment")), false},
		{record("MODIFY", l.Marker("Order")), false},
		{record("REMOVE", l.Marker("Order")), false},
		{record("INSERT", "OrderSummary#tombstone"), false},
	}
	for i, c := range cases {
		if got := matches(pattern, c.rec); got != c.keep {
			t.Errorf("case %d: kept %v, want %v", i, got, c.keep)
		}
	}
}

// TestK1_KinesisFilterCriteriaMatchInsideData: a Kinesis event source
// mapping filters on the record's data only (the change record, which
// Lambda reads as JSON), so the Kinesis criteria are the stream criteria
// under "data"; each kind's pattern keeps nothing of the other kind.
func TestK1_KinesisFilterCriteriaMatchInsideData(t *testing.T) {
	l := DefaultLayout("shop", 1)
	streams := []Stream{{Name: "Order", Composite: []string{"orderId"}}, {Name: "Sensor", Composite: []string{"sensorId"}}}
	pattern := func(b []byte, err error) any {
		t.Helper()
		var fc struct{ Filters []struct{ Pattern string } }
		if err != nil || json.Unmarshal(b, &fc) != nil || len(fc.Filters) != 1 {
			t.Fatalf("FilterCriteria = %s (%v)", b, err)
		}
		var p any
		if err := json.Unmarshal([]byte(fc.Filters[0].Pattern), &p); err != nil {
			t.Fatalf("the pattern is not JSON: %v", err)
		}
		return p
	}
	kinesis := pattern(l.KinesisFilterCriteria(streams...))
	streamPattern := pattern(l.FilterCriteria(streams...))
	p, ok := kinesis.(map[string]any)
	if !ok || len(p) != 1 || p["data"] == nil {
		t.Fatalf("pattern %v: Kinesis mappings filter on data alone", kinesis)
	}
	// A Kinesis record as Lambda's filter sees it: the data as JSON.
	record := func(name, marker string, ttl bool) any {
		identity := "null"
		if ttl {
			identity = `{"type":"Service","principalId":"dynamodb.amazonaws.com"}`
		}
		var r any
		js := `{"eventSource":"aws:kinesis","eventName":"aws:kinesis:record","eventID":"shardId-000000000000:1",` +
			`"data":{"awsRegion":"us-east-1","eventName":"` + name + `","userIdentity":` + identity + `,"recordFormat":"application/json",` +
			`"tableName":"events","eventSource":"aws:dynamodb","dynamodb":{"ApproximateCreationDateTime":1795953600123,` +
			`"NewImage":{"__edd_e__":{"S":"` + marker + `"}},"OldImage":{"__edd_e__":{"S":"` + marker + `"}}}}}`
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		rec  any
		keep bool
	}{
		{record("INSERT", l.Marker("Order"), false), true},
		{record("INSERT", l.Marker("Sensor"), false), true},
		{record("INSERT", l.Marker("Payment"), false), false},
		{record("MODIFY", l.Marker("Order"), false), false},
		{record("REMOVE", l.Marker("Order"), false), false},
		{record("REMOVE", l.Marker("Order"), true), false}, // a TTL deletion
		{record("INSERT", "OrderSummary#tombstone", false), false},
	}
	for i, c := range cases {
		if got := matches(kinesis, c.rec); got != c.keep {
			t.Errorf("case %d: kept %v, want %v", i, got, c.keep)
		}
		if matches(streamPattern, c.rec) {
			t.Errorf("case %d: the stream pattern keeps a Kinesis record", i)
		}
	}
	var streamRecord any
	_ = json.Unmarshal([]byte(`{"eventName":"INSERT","dynamodb":{"NewImage":{"__edd_e__":{"S":"`+l.Marker("Order")+`"}}}}`), &streamRecord)
	if !matches(streamPattern, streamRecord) || matches(kinesis, streamRecord) {
		t.Error("each pattern keeps its own kind of record only")
	}
}
