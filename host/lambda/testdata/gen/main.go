// Command gen writes the captured batches in host/lambda/testdata: it appends
// order-summary events with the host's event store to an in-process ddblocal
// (the effect-dynamodb item layout), writes a few items no writer should
// (undecodable events), reads the event table's change feed through the
// DynamoDB Streams API, and writes the records as Lambda (an event source
// mapping's {"Records": [...]}) or an EventBridge Pipe (a JSON array)
// deliver them.
//
//	go run ./host/lambda/testdata/gen   (from the repository root; writes host/lambda/testdata)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/lambdaevents"
	"github.com/dynafold/dynafold/host/streamsdk"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

var order = eventstore.Stream{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}

type gen struct {
	ctx    context.Context
	es     *eventstore.Store
	db     *dynamo.DB
	sc     *dynamodbstreams.Client
	arn    string
	heads  map[string]uint64
	seen   int
	dir    string
	layout eventstore.Layout
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx := context.Background()
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	// One shard: each captured batch is the feed in write order across
	// items, as the fixtures have always been (a stream of several shards
	// would deliver each shard's records in a batch of its own).
	srv, err := ddblocal.Start(ctx, ddblocal.Options{Now: func() time.Time { return clock }, Streams: ddblocal.StreamOptions{Shards: 1}})
	if err != nil {
		return err
	}
	defer srv.Close()
	client, err := ddbclient.NewClient(ctx, srv.Endpoint(), "us-east-1")
	if err != nil {
		return err
	}
	out, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("events"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}})
	if err != nil {
		return err
	}
	db := dynamo.New(client)
	layout := eventstore.DefaultLayout("shop", 1)
	es, err := eventstore.New(db, "events", layout, eventstore.WithClock(func() time.Time { return clock }))
	if err != nil {
		return err
	}
	sc := dynamodbstreams.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")},
		func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(srv.Endpoint()) })
	g := &gen{ctx: ctx, es: es, db: db, sc: sc, arn: aws.ToString(out.TableDescription.LatestStreamArn),
		heads: map[string]uint64{}, dir: "host/lambda/testdata", layout: layout}
	if _, err := os.Stat(g.dir); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	placed := func(c string) eventstore.NewEvent {
		return eventstore.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(c)}}
	}
	item := func(sku string, price abi.Value) eventstore.NewEvent {
		return eventstore.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S(sku), "price": price}}
	}
	shipped := eventstore.NewEvent{Type: "OrderShipped", Data: abi.Item{}}

	// A healthy batch: three orders, appends interleaved.
	g.append("o-1", placed("c-1"), item("sku-1", abi.N("12.5")))
	g.append("o-2", placed("c-2"))
	g.append("o-1", item("sku-2", abi.N("7.25")), shipped)
	g.append("o-2", item("sku-3", abi.N("100")))
	g.append("o-3", placed("c-3"))
	if err := g.write("stream_event.json", false); err != nil {
		return err
	}
	if err := g.writeKinesis("kinesis_event.json", "stream_event.json"); err != nil {
		return err
	}
	// An undecodable event (o-6: version stored as a string) beside a
	// healthy row.
	g.append("o-4", placed("c-4"), item("sku-4", abi.N("3")))
	g.putBad("o-6", "OrderPlaced", func(it abi.Item) { it["version"] = abi.S("1") })
	g.append("o-4", shipped)
	if err := g.write("decode_failure.json", false); err != nil {
		return err
	}
	// A failing row (o-5: a price evolve cannot read) beside a healthy one.
	g.append("o-5", placed("c-5"))
	g.append("o-10", placed("c-10"), item("sku-10", abi.N("4.75")))
	g.append("o-5", item("sku-5", abi.S("free")), item("sku-6", abi.N("1")))
	if err := g.write("failing_row.json", false); err != nil {
		return err
	}
	// A healthy row, a failing row (o-8) and an undecodable event (o-9: no
	// data) as an EventBridge Pipe delivers them to its target.
	g.append("o-7", placed("c-7"), item("sku-7", abi.N("2.5")))
	g.append("o-8", placed("c-8"))
	g.append("o-8", item("sku-8", abi.L(abi.N("1"))))
	g.putBad("o-9", "OrderPlaced", func(it abi.Item) { delete(it, "data") })
	g.append("o-7", shipped)
	if err := g.write("pipe_batch.json", true); err != nil {
		return err
	}
	return nil
}

func (g *gen) append(id string, evs ...eventstore.NewEvent) {
	if _, err := g.es.Append(g.ctx, order, id, g.heads[id], evs...); err != nil {
		log.Fatalf("append %s: %v", id, err)
	}
	g.heads[id] += uint64(len(evs))
}

// putBad writes an event item of the default layout, spoilt by spoil.
func (g *gen) putBad(id, typ string, spoil func(abi.Item)) {
	g.heads[id]++
	it := g.layout.Item(abi.Event{Stream: order.Name, StreamID: id, Version: g.heads[id], Type: typ,
		Data: abi.Item{"_tag": abi.S(typ)}, Timestamp: "2026-11-29T12:00:00.000Z"})
	spoil(it)
	if err := g.db.PutItem(g.ctx, store.Put{Table: "events", Item: it}); err != nil {
		log.Fatalf("put %s: %v", id, err)
	}
}

// write writes the records appended since the last write.
func (g *gen) write(name string, pipe bool) error {
	all, err := g.feed()
	if err != nil {
		return err
	}
	recs := all[g.seen:]
	g.seen = len(all)
	var raws []json.RawMessage
	for _, r := range recs {
		r.EventSourceARN = g.arn
		r.DynamoDB.ApproximateCreationDateTime = r.DynamoDB.ApproximateCreationDateTime.Truncate(time.Second)
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		raws = append(raws, b)
	}
	var v any = map[string]any{"Records": raws}
	if pipe {
		v = raws
	}
	return g.writeJSON(name, v, len(recs))
}

// writeKinesis writes the records of a stream event file as a Lambda
// Kinesis event delivers them from a table's Kinesis streaming destination
// (creation times in milliseconds): o-1's records 3 and 4 arrive in the
// other order and o-2's first record twice, as AWS warns a Kinesis data
// stream may deliver them (after o-1's last).
func (g *gen) writeKinesis(name, from string) error {
	b, err := os.ReadFile(filepath.Join(g.dir, from))
	if err != nil {
		return err
	}
	recs, err := host.ParseEvent(b)
	if err != nil {
		return err
	}
	recs[3], recs[4] = recs[4], recs[3]
	recs = append(recs[:5], append([]host.Record{recs[2]}, recs[5:]...)...)
	var out []events.KinesisEventRecord
	for i, r := range recs {
		r.DynamoDB.SequenceNumber = fmt.Sprintf("4965%052d", i+1)
		kr, err := lambdaevents.ToKinesisRecord(r, lambdaevents.KinesisOptions{Table: "events",
			StreamARN: "arn:aws:kinesis:us-east-1:000000000000:stream/events-changes", Shard: "shardId-000000000002"})
		if err != nil {
			return err
		}
		out = append(out, kr)
	}
	return g.writeJSON(name, map[string]any{"Records": out}, len(out))
}

func (g *gen) writeJSON(name string, v any, n int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	fmt.Printf("%s: %d records\n", name, n)
	return os.WriteFile(filepath.Join(g.dir, name), buf.Bytes(), 0o644)
}

// feed reads the whole change feed of the event table, shard by shard.
func (g *gen) feed() ([]host.Record, error) {
	ds, err := g.sc.DescribeStream(g.ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(g.arn)})
	if err != nil {
		return nil, err
	}
	var all []host.Record
	for _, sh := range ds.StreamDescription.Shards {
		it, err := g.sc.GetShardIterator(g.ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(g.arn),
			ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, err
		}
		for iter := it.ShardIterator; iter != nil; {
			out, err := g.sc.GetRecords(g.ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return nil, err
			}
			recs, err := streamsdk.Records(out.Records)
			if err != nil {
				return nil, err
			}
			all = append(all, recs...)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	return all, nil
}
