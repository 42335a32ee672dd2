//go:build !wasip1

package examples_test

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	zonereadings "github.com/dynafold/dynafold/plugins/examples/zone-readings"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
)

func priced(id string, v uint64, price string) guesttest.Ev {
	return guesttest.Event("Order", id, v, "ItemAdded", map[string]any{"sku": "s", "price": guest.MustDecimal(price)})
}

func orderRow(id, status string, items int64, total string) abi.Item {
	s := ordersummary.OrderSummary{OrderID: id, Customer: "Ada", Status: status, Items: items, Total: guest.MustDecimal(total)}
	return guesttest.Row(ordersummary.RowKey(id), ordersummary.Item{OrderSummary: s, GSI1PK: status, GSI1SK: id})
}

// TestW2_OrderSummarySumsPricesExactly folds the prices that made float64
// totals like 5.550000000000001 and 21.700000000000003: the order summary
// stores the exact decimals.
func TestW2_OrderSummarySumsPricesExactly(t *testing.T) {
	placed := func(id string) guesttest.Ev {
		return guesttest.Event("Order", id, 1, "OrderPlaced", ordersummary.OrderPlaced{Customer: "Ada"})
	}
	guesttest.Check(t, ordersummary.Projection, []guesttest.Ev{
		placed("o-1"), priced("o-1", 2, "0.1"), priced("o-1", 3, "2.25"), priced("o-1", 4, "1.5"), priced("o-1", 5, "1.7"),
		placed("o-2"), priced("o-2", 2, "1.5"), priced("o-2", 3, "2.25"), priced("o-2", 4, "0.1"), priced("o-2", 5, "17.85"),
		guesttest.Event("Order", "o-2", 6, "OrderShipped", nil),
	}, orderRow("o-1", "placed", 4, "5.55"), orderRow("o-2", "shipped", 4, "21.7"))

	// A sum longer than DynamoDB's 38 digits fails the row instead of
	// being rounded.
	got, err := guesttest.Fold(ordersummary.Projection, placed("o-3"), priced("o-3", 2, "1E+100"), priced("o-3", 3, "1E-100"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Err == nil || got[0].Decisions[2].Error.Tag != "BadTotal" {
		t.Fatalf("a 201-digit total: %+v", got)
	}
}

// TestP9_ZoneReadingsKeepsTheExactMaximum: readings compare as decimals,
// the maximum is stored as the sensor sent it.
func TestP9_ZoneReadingsKeepsTheExactMaximum(t *testing.T) {
	reading := func(v uint64, c string) guesttest.Ev {
		return guesttest.Event("Sensor", "s-1", v, "SensorReading", map[string]any{"zone": "north", "celsius": guest.MustDecimal(c)})
	}
	max := guest.MustDecimal("30.000000000000000001")
	guesttest.Check(t, zonereadings.Projection, []guesttest.Ev{
		guesttest.Event("Sensor", "s-1", 1, "SensorPlaced", map[string]any{"zone": "north"}),
		reading(2, "30"), reading(3, "30.000000000000000001"), reading(4, "-4.5"),
	}, guesttest.Row(zonereadings.RowKey("s-1", "north"), zonereadings.ZoneReading{
		SensorID: "s-1", Zone: "north", Readings: 3, MaxCelsius: &max, AlertKey: "hot"}))
}
