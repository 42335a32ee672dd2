package guest

import (
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// An event whose data does not match the type it is decoded into (an
// attribute of another kind, a number its field cannot hold) is bad event
// data, and its error says so, without a byte offset; data that does not
// decode at all is still a malformed encoding, and FromItem, which maps
// no event, keeps the ABI's wording.
func TestW2_EventDataOfTheWrongTypeReadsAsBadEventData(t *testing.T) {
	type cart struct {
		SKU string `ddb:"sku"`
		Qty int64  `ddb:"qty"`
	}
	const tail = " does not match the plugin's type)"
	for item, want := range map[string]abi.Item{
		`event data: attribute "qty": cannot decode S into int64 (the event's data` + tail:        {"sku": abi.S("x"), "qty": abi.S("one")},
		`event data: attribute "sku": cannot decode N into string (the event's data` + tail:       {"sku": abi.N("5")},
		`event data: attribute "qty": number "1e400" does not fit int64 (the event's data` + tail: {"qty": abi.N("1e400")},
	} {
		var c cart
		err := NewEvent(abi.Event{Data: want}).Decode(&c)
		var de *EventDataError
		if !errors.As(err, &de) || err.Error() != item {
			t.Errorf("%v: error %v, want %q", want, err, item)
		}
		if errors.Is(err, abi.ErrMalformed) {
			t.Errorf("%v: %v is a malformed encoding", want, err)
		}
		if err := FromItem(want, &c); !errors.Is(err, abi.ErrMalformed) {
			t.Errorf("FromItem(%v): error %v, want an abi decoding error", want, err)
		}
	}

	var c cart
	err := NewEvent(abi.Event{Metadata: abi.Item{"qty": abi.Bool(true)}}).DecodeMetadata(&c)
	if want := `event metadata: attribute "qty": cannot decode BOOL into int64 (the event's metadata` + tail; err == nil || err.Error() != want {
		t.Errorf("metadata: error %v, want %q", err, want)
	}

	whole := abi.AppendOptItem(nil, abi.Item{"sku": abi.S("one")})
	err = Event{data: string(whole[:len(whole)-2])}.Decode(&c)
	if !errors.Is(err, abi.ErrMalformed) {
		t.Errorf("truncated data: error %v, want an abi decoding error", err)
	}
}
