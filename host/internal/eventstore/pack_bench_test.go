package eventstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// BenchmarkDecodePacked measures decoding one event item whose data
// (about 2 KB of DynamoDB JSON) is stored as a map ("plain") or packed with each
// built-in codec: what packing adds to every decode of the change feed and
// of gap-fill reads.
//
//	go test ./host/internal/eventstore -run '^$' -bench DecodePacked -benchtime 2s
func BenchmarkDecodePacked(b *testing.B) {
	l := eventstore.DefaultLayout("shop", 1)
	d, err := l.NewDecoder(tenantStream)
	if err != nil {
		b.Fatal(err)
	}
	ev := sampleEvent("t1#o1")
	for i := range 20 {
		ev.Data[fmt.Sprintf("line%02d", i)] = abi.M(abi.Item{"sku": abi.S(fmt.Sprintf("SKU-%04d", i)),
			"qty": abi.N("2"), "note": abi.S(strings.Repeat("gift wrap ", 2))})
	}
	for _, codec := range []string{"plain", eventstore.CodecGzip, eventstore.CodecDeflate} {
		p := eventstore.Packing{Codec: codec}
		if codec == "plain" {
			p = eventstore.Packing{}
		}
		item, err := l.PackedItem(ev, p)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := ddbjson.ItemToJSON(ev.Data)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(codec, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := d.Decode(item); !ok || err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(raw)), "json-bytes")
			if v := item["data"]; v.Kind == abi.KindB {
				b.ReportMetric(float64(len(v.Bytes)), "stored-bytes")
			}
		})
	}
}

// BenchmarkDecodeKeyCheck measures what checking an event item's key
// against its streamId and version adds to a decode: the host's decoder
// (checked) beside one that knows no layout and checks no key, on the same
// small item (an order's event, upper-case letters in its stream id).
//
//	go test ./host/internal/eventstore -run '^$' -bench DecodeKeyCheck -count 5
func BenchmarkDecodeKeyCheck(b *testing.B) {
	l := eventstore.DefaultLayout("shop", 1)
	checked, err := l.NewDecoder(orderStream)
	if err != nil {
		b.Fatal(err)
	}
	unchecked, err := eventstore.NewDecoder(orderStream)
	if err != nil {
		b.Fatal(err)
	}
	item := l.Item(abi.Event{Stream: "Order", StreamID: "O-1042", Version: 7, Type: "ItemAdded",
		Data: abi.Item{"sku": abi.S("A-1"), "price": abi.N("12.50")}, Timestamp: "2026-11-29T12:00:00.000Z"})
	for _, c := range []struct {
		name string
		d    *eventstore.Decoder
	}{{"checked", checked}, {"unchecked", unchecked}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := c.d.Decode(item); !ok || err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
