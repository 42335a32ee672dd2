// Package ordersummary is the OrderSummaryProjection example as a dynafold
// plugin: the "Order" stream folded into one OrderSummary row per order. It
// runs natively (guest.New(Projection)) and as Wasm (./wasm).
package ordersummary

import (
	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// The read model's layout: entity type, checkpoint field, key attributes.
const (
	EntityType = "OrderSummary"
	Checkpoint = "version"
	Stream     = "Order"
)

// OrderSummary is the row's state.
type OrderSummary struct {
	OrderID  string        `ddb:"orderId"`
	Customer string        `ddb:"customer"`
	Status   string        `ddb:"status"`
	Items    int64         `ddb:"items"`
	Total    guest.Decimal `ddb:"total"`   // exact: prices are money
	Version  int64         `ddb:"version"` // the checkpoint, written by the host
}

// Item is the stored row: the state plus the byStatus index keys (gsi1).
type Item struct {
	OrderSummary
	GSI1PK string `ddb:"gsi1pk"`
	GSI1SK string `ddb:"gsi1sk"`
}

// OrderPlaced is the data of an OrderPlaced event.
type OrderPlaced struct {
	Customer string `ddb:"customer"`
}

// ItemAdded is the data of an ItemAdded event (Evolve reads only its price,
// with Event.Decimal).
type ItemAdded struct {
	SKU   string        `ddb:"sku"`
	Price guest.Decimal `ddb:"price"`
}

// RowKey returns the key of an order's summary row.
func RowKey(orderID string) guest.Key {
	return abi.Item{"pk": abi.S(EntityType + "#" + orderID), "sk": abi.S(EntityType)}
}

// Projection is the order summary projection.
var Projection = guest.Projection[OrderSummary]{
	Name:       "order-summary",
	Version:    "1.0.0",
	Stream:     Stream,
	EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"},
	Key: func(streamID string, _ guest.Event) (guest.Key, bool) {
		return RowKey(streamID), true
	},
	Initial: func(streamID string, _ guest.Event) OrderSummary {
		return OrderSummary{OrderID: streamID, Status: "new"}
	},
	Evolve: func(s OrderSummary, e guest.Event) (OrderSummary, error) {
		switch e.Type {
		case "OrderPlaced":
			var d OrderPlaced
			if err := e.Decode(&d); err != nil {
				return s, err
			}
			s.Customer, s.Status = d.Customer, "placed"
		case "ItemAdded":
			// The hot path: one attribute, read without a mapping plan, as
			// an exact decimal (float64 would sum 0.1 + 2.25 + … to
			// 5.550000000000001).
			price, ok := e.Decimal("price")
			if !ok {
				return s, guest.Errorf("BadEvent", "ItemAdded v%d: price is not a number", e.Version)
			}
			total := s.Total.Add(price)
			if err := total.Valid(); err != nil {
				return s, guest.Errorf("BadTotal", "ItemAdded v%d: total %v", e.Version, err)
			}
			s.Items++
			s.Total = total
		case "OrderShipped":
			s.Status = "shipped"
		default:
			return s, guest.Errorf("UnknownEvent", "order-summary does not fold %q", e.Type)
		}
		return s, nil
	},
	ToItem: func(s OrderSummary, _ guest.ItemContext) any {
		return Item{OrderSummary: s, GSI1PK: s.Status, GSI1SK: s.OrderID}
	},
}
