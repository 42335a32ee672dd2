package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
)

// syntheticBatch appends orders (OrderPlaced, three ItemAdded, OrderShipped:
// five events each) to the event table and returns them as the stream event
// Lambda delivers, the orders' appends interleaved: orders*5 records.
func syntheticBatch(t testing.TB, env *testenv.Env, events string, first, orders int, seq *int) []byte {
	t.Helper()
	return syntheticBatchOf(t, env, events, first, orders, 5, seq)
}

// syntheticBatchOf is syntheticBatch with the first k (1 to 5) events of
// each order: orders*k records.
func syntheticBatchOf(t testing.TB, env *testenv.Env, events string, first, orders, k int, seq *int) []byte {
	t.Helper()
	es, err := host.New(context.Background(), &host.Config{EventStore: host.EventStoreConfig{Table: events, Schema: "shop", SchemaVersion: 1,
		Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}}}, host.WithClient(env.Client), host.WithEventStoreOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close(context.Background())
	ts := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var raws []json.RawMessage
	for v := uint64(1); v <= uint64(k); v++ {
		for o := first; o < first+orders; o++ {
			e := abi.Event{Stream: "Order", StreamID: fmt.Sprintf("b-%05d", o), Version: v, Type: "ItemAdded",
				Data: abi.Item{"sku": abi.S(fmt.Sprintf("sku-%d", v)), "price": abi.N(fmt.Sprintf("%d.25", v))}, Timestamp: "2026-11-29T12:00:00.000Z"}
			switch v {
			case 1:
				e.Type, e.Data = "OrderPlaced", abi.Item{"customer": abi.S("c")}
			case 5:
				e.Type, e.Data = "OrderShipped", abi.Item{}
			}
			img := es.EventItem(e)
			env.Put(t, events, img)
			*seq++
			rec := host.Record{EventID: fmt.Sprintf("%032x", *seq), EventName: host.EventInsert, EventVersion: "1.1",
				EventSource: "aws:dynamodb", AWSRegion: "us-east-1",
				EventSourceARN: "arn:aws:dynamodb:us-east-1:000000000000:table/" + events + "/stream/2026-11-29T12:00:00.000",
				DynamoDB: host.StreamRecord{ApproximateCreationDateTime: ts, SequenceNumber: fmt.Sprintf("%021d", *seq),
					Keys: abi.Item{"pk": img["pk"], "sk": img["sk"]}, NewImage: img, SizeBytes: 250, StreamViewType: "NEW_IMAGE"}}
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			raws = append(raws, b)
		}
	}
	b, err := json.Marshal(map[string]any{"Records": raws})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
