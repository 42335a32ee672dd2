package lambda_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// The Kinesis side of the handler's tests. Records are written here by
// hand, as DynamoDB writes a change to a Kinesis data stream and Lambda
// delivers it, independently of the package's own converter.

// change is one DynamoDB change record as DynamoDB puts it in a Kinesis
// record's data.
type change struct {
	name     string // INSERT, MODIFY, REMOVE
	keys     abi.Item
	newImage abi.Item
	oldImage abi.Item
	at       int64 // ApproximateCreationDateTime, in the table's precision
	ttl      bool  // a deletion by DynamoDB's TTL
}

// json writes the change record the way DynamoDB does.
func (c change) json(t testing.TB) []byte {
	t.Helper()
	item := func(it abi.Item) json.RawMessage {
		b, err := ddbjson.ItemToJSON(it)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	d := map[string]any{"ApproximateCreationDateTime": c.at, "Keys": item(c.keys), "SizeBytes": 321}
	if c.newImage != nil {
		d["NewImage"] = item(c.newImage)
	}
	if c.oldImage != nil {
		d["OldImage"] = item(c.oldImage)
	}
	var identity any // null, as DynamoDB writes it for an application's change
	if c.ttl {
		identity = map[string]string{"type": "Service", "principalId": "dynamodb.amazonaws.com"}
	}
	sum := md5.Sum(item(c.keys))
	b, err := json.Marshal(map[string]any{
		"awsRegion": "us-east-1", "eventID": fmt.Sprintf("%x-%d", sum[:6], c.at), "eventName": c.name,
		"userIdentity": identity, "recordFormat": "application/json", "tableName": "events",
		"dynamodb": d, "eventSource": "aws:dynamodb",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kinesisSeq is the sequence number of the n-th record of a shard: 56
// digits, as Kinesis writes them, ascending with n.
func kinesisSeq(n int) string { return fmt.Sprintf("4965%052d", n) }

const kinesisARN = "arn:aws:kinesis:us-east-1:000000000000:stream/events-changes"

// kinesisRecord wraps data as Lambda delivers a Kinesis record.
func kinesisRecord(t testing.TB, data []byte, seq string) json.RawMessage {
	t.Helper()
	sum := md5.Sum(data)
	b, err := json.Marshal(map[string]any{
		"kinesis": map[string]any{
			"kinesisSchemaVersion": "1.0", "partitionKey": strings.ToUpper(hex.EncodeToString(sum[:])),
			"sequenceNumber": seq, "data": base64.StdEncoding.EncodeToString(data),
			"approximateArrivalTimestamp": 1795953600.123,
		},
		"eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": "shardId-000000000002:" + seq,
		"eventName": "aws:kinesis:record", "invokeIdentityArn": "arn:aws:iam::000000000000:role/fn",
		"awsRegion": "us-east-1", "eventSourceARN": kinesisARN,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pipeKinesisRecord is the same record as an EventBridge Pipe delivers
// it: the Kinesis fields at the top.
func pipeKinesisRecord(t testing.TB, data []byte, seq string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"kinesisSchemaVersion": "1.0", "partitionKey": "A1", "sequenceNumber": seq,
		"data": base64.StdEncoding.EncodeToString(data), "approximateArrivalTimestamp": 1795953600.123,
		"eventSource": "aws:kinesis", "eventVersion": "1.0", "eventID": "shardId-000000000002:" + seq,
		"eventName": "aws:kinesis:record", "awsRegion": "us-east-1", "eventSourceARN": kinesisARN,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// orderEvents appends orders of five events each (OrderPlaced, three
// ItemAdded, OrderShipped) to the event table, and returns their change
// records in append order, with creation times in milliseconds. An order
// in bad gets the price "x" on its second event, which the plugin cannot
// fold.
func (f *fn) orderEvents(t testing.TB, prefix string, orders int, bad map[int]bool) []change {
	t.Helper()
	es, err := host.New(context.Background(), &host.Config{EventStore: host.EventStoreConfig{Table: f.events, Schema: "shop", SchemaVersion: 1,
		Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}}}, host.WithClient(f.env.Client), host.WithEventStoreOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close(context.Background())
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).UnixMilli()
	var out []change
	for o := 0; o < orders; o++ {
		evs := []host.NewEvent{{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(fmt.Sprint("c-", o))}}}
		for i := 1; i <= 3; i++ {
			price := abi.N(fmt.Sprintf("%d.25", i+o))
			if bad[o] && i == 1 {
				price = abi.S("x")
			}
			evs = append(evs, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S(fmt.Sprint("s-", i)), "price": price}})
		}
		evs = append(evs, host.NewEvent{Type: "OrderShipped", Data: abi.Item{}})
		appended, err := es.Append(context.Background(), "Order", fmt.Sprintf("%s-%d", prefix, o), 0, evs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range appended {
			img := es.EventItem(ev)
			at++
			out = append(out, change{name: "INSERT", keys: abi.Item{"pk": img["pk"], "sk": img["sk"]}, newImage: img, at: at})
		}
	}
	return out
}

// duplicateAndShuffle returns the changes with about a third of them
// twice, in a random order, as AWS warns a Kinesis data stream may deliver
// them.
func duplicateAndShuffle(rng *rand.Rand, cs []change) []change {
	out := append([]change(nil), cs...)
	for _, c := range cs {
		if rng.IntN(3) == 0 {
			out = append(out, c)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// kinesisEvent wraps changes as one Lambda Kinesis event, the sequence
// numbers from first on ascending in record order (a shard's order), and
// returns the sequence numbers by position.
func kinesisEvent(t testing.TB, cs []change, first int) (json.RawMessage, []string) {
	t.Helper()
	raws := make([]json.RawMessage, len(cs))
	seqs := make([]string, len(cs))
	for i, c := range cs {
		seqs[i] = kinesisSeq(first + i)
		raws[i] = kinesisRecord(t, c.json(t), seqs[i])
	}
	return streamEvent(t, raws...), seqs
}

// streamRecords wraps changes as DynamoDB stream records (in a Lambda
// DynamoDB event), for the reference fold.
func streamRecords(t testing.TB, cs []change) json.RawMessage {
	t.Helper()
	raws := make([]json.RawMessage, len(cs))
	for i, c := range cs {
		rec := host.Record{EventID: fmt.Sprint("s-", i), EventName: c.name, EventVersion: "1.1", EventSource: "aws:dynamodb",
			AWSRegion: "us-east-1", EventSourceARN: "arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/2026-11-29T12:00:00.000",
			DynamoDB: host.StreamRecord{ApproximateCreationDateTime: time.UnixMilli(c.at).Truncate(time.Second),
				Keys: c.keys, NewImage: c.newImage, OldImage: c.oldImage, SequenceNumber: fmt.Sprintf("%021d", i+1),
				SizeBytes: 321, StreamViewType: "NEW_AND_OLD_IMAGES"}}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		raws[i] = b
	}
	return streamEvent(t, raws...)
}
