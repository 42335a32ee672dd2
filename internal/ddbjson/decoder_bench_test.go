package ddbjson

import (
	"strings"
	"testing"
)

// benchItems are a typical event item and an item near DynamoDB's 400 KB
// made of a long list of small values.
var benchItems = map[string][]byte{
	"event": []byte(`{"pk":{"S":"$shop#v1#order#o-123"},"sk":{"S":"$shop#v1#order.event_1#0000000042"},"__edd_e__":{"S":"order.event"},` +
		`"streamId":{"S":"o-123"},"version":{"N":"42"},"eventType":{"S":"ItemAdded"},"timestamp":{"S":"2025-06-09T10:11:12.345Z"},` +
		`"data":{"M":{"_tag":{"S":"ItemAdded"},"sku":{"S":"sku-9"},"qty":{"N":"3"},"price":{"N":"12.50"},"tags":{"SS":["a","b"]}}}}`),
	"list100k": []byte(`{"pk":{"S":"k"},"l":{"L":[` + strings.Repeat(`{"N":"1"},`, 99_999) + `{"N":"1"}]}}`),
}

func BenchmarkDecodeItem(b *testing.B) {
	for _, name := range []string{"event", "list100k"} {
		in := benchItems[name]
		b.Run(name+"/onepass", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeItem(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := refDecodeItem(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
