package host_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Counter is the state of the examples' projection: how many visits a
// page had.
type Counter struct {
	Page   string `ddb:"page"`
	Visits int64  `ddb:"visits"`
}

// visits is a native Go projection: the same value compiles to a Wasm
// plugin with GOOS=wasip1 GOARCH=wasm (see plugins/examples).
var visits = guest.Projection[Counter]{
	Name: "visits", Version: "1.0.0", Stream: "Page", EventTypes: []string{"Visited"},
	Key: func(streamID string, _ guest.Event) (guest.Key, bool) {
		return abi.Item{"pk": abi.S("Page#" + streamID), "sk": abi.S("Counter")}, true
	},
	Initial: func(streamID string, _ guest.Event) Counter { return Counter{Page: streamID} },
	Evolve: func(s Counter, _ guest.Event) (Counter, error) {
		s.Visits++
		return s, nil
	},
}

// exampleConfig starts ddblocal in-process, creates the event table (with
// a NEW_IMAGE stream) and the read-model table, and returns a
// configuration for them; stop stops ddblocal.
func exampleConfig(ctx context.Context) (cfg *host.Config, stop func()) {
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	for _, t := range []struct {
		name   string
		stream bool
	}{{"events", true}, {"page-counters", false}} {
		in := &dynamodb.CreateTableInput{TableName: aws.String(t.name), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}}
		if t.stream {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
		}
		if _, err := client.CreateTable(ctx, in); err != nil {
			log.Fatal(err)
		}
	}
	cfg, err = host.ParseConfig([]byte(`{
  "endpoint": "` + srv.Endpoint() + `",
  "eventStore": {"table": "events", "schema": "web", "schemaVersion": 1,
                 "streams": [{"name": "Page", "eventTypes": ["Visited"], "composite": ["path"]}]},
  "projections": [{"name": "counters", "plugin": "native:visits", "table": "page-counters",
                   "checkpoint": {"field": "version"}}]
}`))
	if err != nil {
		log.Fatal(err)
	}
	return cfg, func() { _ = srv.Close() }
}

// visitsHost is a host running the visits projection natively on
// ddblocal; stop closes both.
func visitsHost(ctx context.Context) (h *host.Host, stop func()) {
	cfg, stopDB := exampleConfig(ctx)
	plugin, err := guest.New(visits)
	if err != nil {
		log.Fatal(err)
	}
	h, err = host.New(ctx, cfg, host.WithNative("visits", logic.Native(plugin, "visits")))
	if err != nil {
		log.Fatal(err)
	}
	return h, func() { _ = h.Close(ctx); stopDB() }
}

// insertRecords returns the INSERT records the change feed delivers for
// events just appended, as a Lambda event source mapping would.
func insertRecords(h *host.Host, evs []abi.Event) []host.Record {
	recs := make([]host.Record, len(evs))
	for i, ev := range evs {
		recs[i] = host.Record{EventName: host.EventInsert, EventID: fmt.Sprint("e-", ev.Version),
			DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprint(100 + ev.Version)}}
	}
	return recs
}

// A native Go projection embedded in a program: events appended to the
// event store, their change-feed records delivered out of order and twice,
// and one row written, once, with the right count.
func Example() {
	ctx := context.Background()
	h, stop := visitsHost(ctx) // host.New with a native projection on an in-process ddblocal: see example_test.go
	defer stop()

	evs, err := h.Append(ctx, "Page", "home", 0,
		host.NewEvent{Type: "Visited", Data: abi.Item{}}, host.NewEvent{Type: "Visited", Data: abi.Item{}},
		host.NewEvent{Type: "Visited", Data: abi.Item{}})
	if err != nil {
		log.Fatal(err)
	}
	// the change-feed records of evs, built with h.EventItem: see example_test.go
	recs := insertRecords(h, evs)
	batch := []host.Record{recs[2], recs[0], recs[2], recs[1]} // out of order, v3 twice
	res, err := h.ProcessBatch(ctx, batch)
	if err != nil {
		log.Fatal(err)
	}
	resp, _ := res.Response()
	row := res.Projections["counters"].Rows[0]
	fmt.Println("failed records:", len(resp.BatchItemFailures))
	fmt.Println("applied versions:", len(row.Applied()), "written:", row.Written)
	it, _, err := h.Row(ctx, "counters", row.Key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("visits:", it["visits"].Str, "checkpoint:", it["version"].Str)
	// Output:
	// failed records: 0
	// applied versions: 3 written: true
	// visits: 3 checkpoint: 3
}

// A captured DynamoDB stream event (the JSON a Lambda function receives)
// parsed and run through the host: records that are not events of a
// configured stream are acknowledged and reported as ignored.
func ExampleParseEvent() {
	ctx := context.Background()
	h, stop := visitsHost(ctx) // host.New with a native projection on an in-process ddblocal: see example_test.go
	defer stop()
	recs, err := host.ParseEvent([]byte(`{"Records": [
	  {"eventID": "1", "eventName": "MODIFY", "dynamodb": {"SequenceNumber": "100",
	   "Keys": {"pk": {"S": "x"}, "sk": {"S": "y"}}, "NewImage": {"pk": {"S": "x"}, "sk": {"S": "y"}}}},
	  {"eventID": "2", "eventName": "INSERT", "dynamodb": {"SequenceNumber": "101",
	   "NewImage": {"pk": {"S": "not"}, "sk": {"S": "an event"}}}}
	]}`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := h.ProcessBatch(ctx, recs)
	if err != nil {
		log.Fatal(err)
	}
	for _, ig := range res.Ignored {
		fmt.Println("record", ig.Identifier, "ignored:", ig.Reason)
	}
	resp, _ := res.Response()
	fmt.Println("failed records:", len(resp.BatchItemFailures))
	// Output:
	// record 100 ignored: modify
	// record 101 ignored: not-an-event
	// failed records: 0
}

// A projection whose plugin is hot-swapped: with "hotSwap" in its
// configuration, Watch follows the plugin file and serves each new version
// that passes validation and the smoke test, while batches keep running.
func ExampleHost_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := host.LoadConfig("dynafold.json") // "hotSwap": {"watch": true} on a projection
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	go func() {
		if err := h.Watch(ctx); err != nil {
			log.Print(err)
		}
	}()
	name, version, _ := h.PluginVersion(cfg.Projections[0].Name)
	fmt.Println(strings.Join([]string{name, version}, "@"), "serving")
}
