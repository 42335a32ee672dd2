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
