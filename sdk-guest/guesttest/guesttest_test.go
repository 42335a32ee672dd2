package guesttest_test

import (
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
	"github.com/dynafold/dynafold/sdk-guest/guesttest"
)

func order(id string, prices ...string) []guesttest.Ev {
	evs := []guesttest.Ev{guesttest.Event("Order", id, 1, "OrderPlaced", map[string]any{"customer": "Ada"})}
	for i, p := range prices {
		evs = append(evs, guesttest.Event("Order", id, uint64(i+2), "ItemAdded",
			ordersummary.ItemAdded{SKU: "sku", Price: guest.MustDecimal(p)}))
	}
	return evs
}

func summary(id, status string, items int64, total string) abi.Item {
	s := ordersummary.OrderSummary{OrderID: id, Customer: "Ada", Status: status, Items: items, Total: guest.MustDecimal(total)}
	return guesttest.Row(ordersummary.RowKey(id), ordersummary.Item{OrderSummary: s, GSI1PK: status, GSI1SK: id})
}

// TestW2_GuestTestFoldsTypedEvents folds typed events, out of order and
// with a duplicate, through the order summary and compares its rows.
func TestW2_GuestTestFoldsTypedEvents(t *testing.T) {
	evs := order("o-1", "0.1", "2.25", "1.5", "1.7")
	evs = append(evs, order("o-2", "19.99")...)
	evs = append(evs, guesttest.Event("Order", "o-2", 3, "OrderShipped", nil), evs[2]) // evs[2]: a duplicate
	evs[0], evs[3] = evs[3], evs[0]                                                    // out of order
	got := guesttest.Check(t, ordersummary.Projection, evs,
		summary("o-1", "placed", 4, "5.55"), summary("o-2", "shipped", 1, "19.99"))
	if len(got) != 2 || len(got[0].Decisions) != 5 || got[0].Decisions[4].Outcome != abi.Applied {
		t.Fatalf("results %+v", got)
	}
}

// TestW2_GuestTestDiffIsReadable: a wrong total, a missing row, a failed row
// and an unexpected row each get one line naming the row and attribute.
func TestW2_GuestTestDiffIsReadable(t *testing.T) {
	evs := append(order("o-1", "0.1", "0.2"), guesttest.Event("Order", "o-3", 1, "OrderLost", nil))
	evs = append(evs, order("o-4")...)
	got, err := guesttest.Fold(ordersummary.Projection, evs...)
	if err != nil {
		t.Fatal(err)
	}
	diff := guesttest.Diff(got, summary("o-1", "placed", 2, "0.30000000000000004"), summary("o-2", "new", 0, "0"),
		summary("o-3", "new", 0, "0"))
	for _, want := range []string{
		`row pk=OrderSummary#o-1,sk=OrderSummary: total = 0.3, want 0.30000000000000004`,
		`row 1 ({customer: "Ada", gsi1pk: "new", gsi1sk: "o-2", items: 0, orderId: "o-2", pk: "OrderSummary#o-2", sk: "OrderSummary", status: "new", total: 0, version: 0}): expected, but no event folds into it`,
		`row pk=OrderSummary#o-3,sk=OrderSummary: failed: OrderLost v1: UnknownEvent: order-summary does not fold "OrderLost"`,
		`row pk=OrderSummary#o-4,sk=OrderSummary: not expected, got {customer: "Ada"`,
	} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if n := strings.Count(diff, "\n") + 1; n != 4 {
		t.Errorf("%d lines, want 4:\n%s", n, diff)
	}
	if guesttest.Diff(got[:1], summary("o-1", "placed", 2, "0.3")) != "" {
		t.Error("equal rows differ")
	}
}

// TestW2_GuestTestCaseAsSelfTest: a case that passes natively passes as a
// self test; a wrong one fails with its difference.
func TestW2_GuestTestCaseAsSelfTest(t *testing.T) {
	good := guesttest.Case{Name: "sums", Events: order("o-1", "1.5", "2.25"), Want: []abi.Item{summary("o-1", "placed", 2, "3.75")}}
	bad := guesttest.Case{Name: "wrong", Events: order("o-1", "1.5"), Want: []abi.Item{summary("o-1", "placed", 1, "1.4")}}
	good.Run(t, ordersummary.Projection)
	tests := guesttest.SelfTests(ordersummary.Projection, good, bad)
	if tests[0].Run() != nil {
		t.Error("the good case fails as a self test")
	}
	if err := tests[1].Run(); err == nil || !strings.Contains(err.Error(), "total = 1.5, want 1.4") {
		t.Errorf("the wrong case: %v", err)
	}
}
