// Package ordercases holds the requests the differential tests send to
// every implementation of the order-summary plugin (Go, AssemblyScript,
// Rust, C): runs in order and with gaps, existing rows, unknown and
// mistyped events, quoted event types and numbers in every form DynamoDB
// writes. The implementations must answer each with the same bytes.
package ordercases

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// Event builds version v of order o-1, of type typ, with data (its _tag
// added).
func Event(v uint64, typ string, data abi.Item) abi.SourcedEvent {
	if data == nil {
		data = abi.Item{}
	}
	data["_tag"] = abi.S(typ)
	return abi.SourcedEvent{Source: "Order", Event: abi.Event{
		Stream: "Order", StreamID: "o-1", Version: v, Type: typ, Data: data,
		Timestamp: "2026-01-01T00:00:00Z",
	}}
}

// Placed is an OrderPlaced event of o-1.
func Placed(v uint64, customer string) abi.SourcedEvent {
	return Event(v, "OrderPlaced", abi.Item{"customer": abi.S(customer)})
}

// Added is an ItemAdded event of o-1 with a price.
func Added(v uint64, price string) abi.SourcedEvent {
	return Event(v, "ItemAdded", abi.Item{"sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N(price)})
}

// Existing is a row as read: the state's attributes plus the hidden ones.
func Existing() abi.Item {
	return abi.Item{
		"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary"),
		"orderId": abi.S("o-1"), "customer": abi.S("c-7"), "status": abi.S("placed"),
		"items": abi.N("3"), "total": abi.N("37.50"), "version": abi.N("4"),
		"gsi1pk": abi.S("placed"), "gsi1sk": abi.S("o-1"),
		"createdAt": abi.S("2026-01-01T00:00:00Z"), "__edd_e__": abi.S("OrderSummary"),
		"tags": abi.SS("a", "b"), "nested": abi.M(abi.Item{"l": abi.L(abi.N("1"), abi.Null())}),
		// what the engine adds to a row a hot swap's new version wrote
		"writtenBy": abi.S("order-summary@1.1.0"), "writtenByBefore": abi.L(abi.S("order-summary@1.0.0")),
	}
}

// Run is k events of order o-1 as the engine sends them: OrderPlaced, then
// ItemAdded.
func Run(k int) *abi.EvolveRequest {
	req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1"}
	for v := 1; v <= k; v++ {
		if v == 1 {
			req.Events = append(req.Events, Placed(1, "c-42"))
		} else {
			req.Events = append(req.Events, Event(uint64(v), "ItemAdded",
				abi.Item{"sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N("12.5")}))
		}
	}
	return req
}

// ManyPrices is n ItemAdded events with varied prices.
func ManyPrices(n int) []abi.SourcedEvent {
	var evs []abi.SourcedEvent
	for i := 1; i <= n; i++ {
		evs = append(evs, Added(uint64(i), fmt.Sprintf("%d.%02d", i*7, (i*37)%100)))
	}
	return evs
}

// Agree is the evolve requests of the differential tests, by name: each
// also as the engine sends it, with ABI 1.1's omitState.
func Agree() map[string]*abi.EvolveRequest {
	key := ordersummary.RowKey("o-1")
	run := func(state abi.Item, events ...abi.SourcedEvent) *abi.EvolveRequest {
		return &abi.EvolveRequest{Key: key, StreamID: "o-1", State: state, Events: events}
	}
	placed, added, ev, existing := Placed, Added, Event, Existing
	cases := map[string]*abi.EvolveRequest{
		"in order k=1":                           Run(1),
		"in order k=10":                          Run(10),
		"in order k=100":                         Run(100),
		"gap in versions":                        run(nil, placed(1, "c-1"), added(2, "3.25"), added(5, "4"), ev(9, "OrderShipped", nil)),
		"absent state starts from initial":       run(nil, added(1, "9.99")),
		"existing state":                         run(existing(), added(5, "2.5"), ev(6, "OrderShipped", nil)),
		"existing state NULLs":                   run(abi.Item{"customer": abi.Null(), "total": abi.Null(), "items": abi.N("2")}, added(3, "1")),
		"unknown event type stops the run":       run(nil, placed(1, "c-1"), ev(2, "OrderCancelled", nil), added(3, "1")),
		"unknown event type first: stays absent": run(nil, ev(1, "Mystery", nil), placed(2, "c")),
		"unknown event on existing state":        run(existing(), added(5, "1"), ev(6, "Refunded", nil)),
		"quoted event type":                      run(nil, ev(1, "We\"ird\\ \t\x01 Ünï ☃ \u00ad\xff", nil)),
		"missing price is BadEvent":              run(nil, placed(1, "c"), ev(2, "ItemAdded", abi.Item{"sku": abi.S("x")})),
		"string price is BadEvent":               run(nil, ev(1, "ItemAdded", abi.Item{"price": abi.S("12")})),
		"out of range price is BadEvent":         run(nil, ev(1, "ItemAdded", abi.Item{"price": abi.N("1e400")})),
		"placed without customer":                run(nil, ev(1, "OrderPlaced", nil)),
		"placed with a number for customer":      run(nil, placed(1, "c"), ev(2, "OrderPlaced", abi.Item{"customer": abi.N("5"), "zz": abi.L(abi.S("x"))})),
		"placed with a BOOL customer first":      run(nil, ev(1, "OrderPlaced", abi.Item{"customer": abi.Bool(true)})),
		"placed with a list customer on a row":   run(existing(), ev(5, "OrderPlaced", abi.Item{"sku": abi.S("x"), "customer": abi.L(abi.S("c"))})),
		"placed with NULL customer":              run(existing(), ev(5, "OrderPlaced", abi.Item{"customer": abi.Null()})),
		"empty request stream id":                {Key: key, State: nil, Events: []abi.SourcedEvent{placed(1, "c")}},
		"no events":                              run(existing()),
		"float 0.1+0.2":                          run(nil, added(1, "0.1"), added(2, "0.2")),
		"float thirds":                           run(nil, added(1, "0.3333333333333333"), added(2, "0.6666666666666666"), added(3, "1e-3")),
		"float large e+06":                       run(nil, added(1, "999999.99"), added(2, "999999.99")),
		"float integer e+07":                     run(nil, added(1, "12345678")),
		"float tiny e-07":                        run(nil, added(1, "1e-7")),
		"float tiny 0.0001":                      run(nil, added(1, "0.0001"), added(2, "0.00002")),
		"float negative":                         run(nil, added(1, "-5.75"), added(2, "-0.5")),
		"float long mantissa":                    run(nil, added(1, "1234567890.123456789012345"), added(2, "98765.4321e3")),
		"float exponent forms":                   run(nil, added(1, "1.5E2"), added(2, "+2.25"), added(3, "1e21"), added(4, "3e22")),
		"many small prices":                      run(nil, ManyPrices(40)...),
	}
	lean := map[string]*abi.EvolveRequest{}
	for name, q := range cases {
		if len(q.Events) > 0 && len(q.Events) < 50 {
			l := *q
			l.OmitState = true
			lean[name+" (omitState)"] = &l
		}
	}
	maps.Copy(cases, lean)
	return cases
}

// MistypedData is the Agree cases (without omitState; with it they answer
// the same) whose last event's data does not match the plugin's type, with
// the message its Failed decision must carry in every implementation:
// bad event data, worded as such, not as a malformed encoding.
func MistypedData() map[string]string {
	const tail = ` (the event's data does not match the plugin's type)`
	return map[string]string{
		"placed with a number for customer":    `event data: attribute "customer": cannot decode N into string` + tail,
		"placed with a BOOL customer first":    `event data: attribute "customer": cannot decode BOOL into string` + tail,
		"placed with a list customer on a row": `event data: attribute "customer": cannot decode L into string` + tail,
	}
}

// RandomNumber returns a DynamoDB number text: up to 21 significant
// digits, a fraction, an exponent, a sign, in the forms DynamoDB and
// clients write.
func RandomNumber(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(5) == 0 {
		b.WriteByte('-')
	}
	digits := 1 + r.IntN(21)
	point := r.IntN(digits + 1)
	for i := 0; i < digits; i++ {
		if i == point && i > 0 {
			b.WriteByte('.')
		}
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	switch r.IntN(4) {
	case 0:
		fmt.Fprintf(&b, "e%d", r.IntN(40)-20)
	case 1:
		fmt.Fprintf(&b, "E+%d", r.IntN(300))
	case 2:
		fmt.Fprintf(&b, "e-%d", r.IntN(320))
	}
	return b.String()
}

// AgreeFailing is the evolve requests the differential tests send that
// each module must refuse with the same error: a row whose state does not
// decode (a number its field cannot hold, a value of the wrong kind), the
// error naming the attribute (FailingState is the message of each).
func AgreeFailing() map[string]*abi.EvolveRequest {
	key := ordersummary.RowKey("o-1")
	run := func(state abi.Item) *abi.EvolveRequest {
		return &abi.EvolveRequest{Key: key, StreamID: "o-1", State: state, Events: []abi.SourcedEvent{Added(3, "1")}}
	}
	return map[string]*abi.EvolveRequest{
		"state items beyond int64":     run(abi.Item{"customer": abi.S("c"), "total": abi.N("1"), "items": abi.N("1e400")}),
		"state version beyond int64":   run(abi.Item{"customer": abi.S("c"), "version": abi.N("-99999999999999999999")}),
		"state total beyond a decimal": run(abi.Item{"customer": abi.S("c"), "total": abi.N("1e400"), "items": abi.N("2")}),
		"state items a string":         run(abi.Item{"customer": abi.S("c"), "items": abi.S("two")}),
	}
}

// FailingState is the guest error each module answers to the AgreeFailing
// case of the same name: a row's stored state of the wrong type, worded as
// such (no "abi: malformed encoding", no byte offset).
func FailingState() map[string]string {
	const (
		head = `guest: state as read: `
		tail = ` (the row's stored state does not match the plugin's type:` +
			` a row written by another version of the plugin or edited by hand; rebuild the row)`
	)
	return map[string]string{
		"state items beyond int64":     head + `attribute "items": number "1e400" does not fit int64` + tail,
		"state version beyond int64":   head + `attribute "version": number "-99999999999999999999" does not fit int64` + tail,
		"state total beyond a decimal": head + `attribute "total": number "1e400" does not fit guest.Decimal` + tail,
		"state items a string":         head + `attribute "items": cannot decode S into int64` + tail,
	}
}
