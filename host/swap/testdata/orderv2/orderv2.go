// Package orderv2 is version 2.0.0 of the order-summary example projection,
// for the hot-swap tests: it folds exactly as 1.0.0 does and differs in one
// visible way, the stored row carries model = 2.
package orderv2

import (
	"fmt"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Model is the value of the row's "model" attribute written by this version.
const Model = 2

// Item is order-summary's stored row plus the model attribute.
type Item struct {
	ordersummary.Item
	Model int64 `ddb:"model"`
}

// Projection is order-summary 2.0.0.
var Projection = func() guest.Projection[ordersummary.OrderSummary] {
	p := ordersummary.Projection
	p.Version = "2.0.0"
	p.ToItem = func(s ordersummary.OrderSummary, _ guest.ItemContext) any {
		return Item{Item: ordersummary.Item{OrderSummary: s, GSI1PK: s.Status, GSI1SK: s.OrderID}, Model: Model}
	}
	return p
}()

// WithStream returns the projection reading another stream (a candidate
// whose streams do not match the configuration).
func WithStream(stream string) guest.Projection[ordersummary.OrderSummary] {
	p := Projection
	p.Stream = stream
	p.Version = "2.0.0-" + stream
	return p
}

// SelfTest folds a placed order with one item and checks the row: the
// failures, none when it passes.
func SelfTest() []string {
	p, err := guest.New(Projection)
	if err != nil {
		return []string{err.Error()}
	}
	req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-t"), StreamID: "o-t", Events: []abi.SourcedEvent{
		{Source: ordersummary.Stream, Event: abi.Event{Stream: ordersummary.Stream, StreamID: "o-t", Version: 1, Type: "OrderPlaced",
			Data: abi.Item{"_tag": abi.S("OrderPlaced"), "customer": abi.S("c-1")}, Timestamp: "2026-01-01T00:00:00Z"}},
		{Source: ordersummary.Stream, Event: abi.Event{Stream: ordersummary.Stream, StreamID: "o-t", Version: 2, Type: "ItemAdded",
			Data: abi.Item{"_tag": abi.S("ItemAdded"), "sku": abi.S("s"), "price": abi.N("2.5")}, Timestamp: "2026-01-01T00:00:00Z"}},
	}}
	resp, err := p.Evolve(req)
	if err != nil {
		return []string{err.Error()}
	}
	var fails []string
	if got := resp.Item["model"]; got.Str != fmt.Sprint(Model) {
		fails = append(fails, fmt.Sprintf("model = %+v, want %d", got, Model))
	}
	if got := resp.Item["items"]; got.Str != "1" {
		fails = append(fails, fmt.Sprintf("items = %+v, want 1", got))
	}
	return fails
}
