package eventstore_test

import (
	"fmt"

	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// The default layout writes the keys the effect-dynamodb EventStore writes;
// the streamId attribute keeps the id as given.
func ExampleDefaultLayout() {
	orders := eventstore.Stream{Name: "Order", EventTypes: []string{"OrderPlaced"}, Composite: []string{"orderId"}}
	id, _ := orders.JoinID("O-1")
	l := eventstore.DefaultLayout("shop", 1)
	fmt.Println(l.PK(orders.Name, id))
	fmt.Println(l.SK(orders.Name, 42))
	fmt.Println(l.Marker(orders.Name))
	// Output:
	// $shop#v1#order#o-1
	// $shop#v1#order.event_1#0000000042
	// order.event
}

// A multi-field stream id joins its composites with '#'; a value containing
// '#' would be ambiguous and is refused.
func ExampleStream_JoinID() {
	sensors := eventstore.Stream{Name: "Sensor", Composite: []string{"siteId", "sensorId"}}
	id, _ := sensors.JoinID("Site-9", "S-1")
	fields, _ := sensors.ParseID(id)
	fmt.Println(id, fields["siteId"], fields["sensorId"])
	_, err := sensors.JoinID("site#9", "S-1")
	fmt.Println(err != nil)
	// Output:
	// Site-9#S-1 Site-9 S-1
	// true
}
