package abi

import (
	"reflect"
	"testing"
)

// TestW1_DescriptionDeclaresComposites: a 1.2 description carries the
// declared composites after the capabilities; a 1.1 one (no trailing
// field) decodes with none, and a 1.1 decoder's view (everything before
// the new field) is unchanged.
func TestW1_DescriptionDeclaresComposites(t *testing.T) {
	d := &Description{Name: "p", Version: "1", ABIMajor: 1, ABIMinor: 2,
		Sources:      []SourceDesc{{Name: "order", Stream: "Order", Mode: ModeFold}, {Name: "scan", Stream: "Scan", Mode: ModeLatest}},
		Capabilities: []Capability{CapDescribe, CapKey, CapEvolve},
		Composites:   []SourceComposite{{Source: "order", Fields: []string{"tenantId", "orderId"}}}}
	b := AppendDescription(nil, d)
	got, err := DecodeDescription(b)
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, got, d)
	}
	old := *d
	old.Composites = nil
	ob := AppendDescription(nil, &old)
	if string(b[:len(ob)]) != string(ob) {
		t.Fatal("the 1.2 field is not appended after the 1.1 fields")
	}
	got, err = DecodeDescription(ob)
	if err != nil || got.Composites != nil || !reflect.DeepEqual(got.Capabilities, d.Capabilities) {
		t.Fatalf("1.1 description: %v %+v", err, got)
	}
	if _, err := DecodeDescription(append(ob, 5)); err == nil {
		t.Error("a composites count beyond the input was accepted")
	}
}
