package lambda_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/logic"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// A Lambda function's handler, built once at cold start and invoked with
// the DynamoDB stream event an event source mapping sends. In a Lambda
// binary, the last line of main is awslambda.Start(fn) (package
// github.com/aws/aws-lambda-go/lambda); cmd/lambda is that binary.
func ExampleBuild() {
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{}) // in Lambda: DynamoDB itself
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	createTable(ctx, srv.Endpoint(), "events")
	createTable(ctx, srv.Endpoint(), "order-summaries")
	cfg, err := host.ParseConfig([]byte(`{
  "endpoint": "` + srv.Endpoint() + `", "source": "lambda",
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1,
                 "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "native:order-summary", "table": "order-summaries",
                   "checkpoint": {"field": "version"}}]
}`))
	if err != nil {
		log.Fatal(err)
	}
	plugin, err := guest.New(ordersummary.Projection)
	if err != nil {
		log.Fatal(err)
	}
	h, fn, err := lambda.Build(ctx, cfg, []host.Option{host.WithNative("order-summary", logic.Native(plugin, "order-summary"))})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	// The event store holds the event; the change feed delivers its INSERT.
	evs, err := h.Append(ctx, "Order", "o-1", 0, host.NewEvent{Type: "OrderPlaced"})
	if err != nil {
		log.Fatal(err)
	}
	payload, err := json.Marshal(map[string]any{"Records": []host.Record{{EventName: host.EventInsert, EventID: "e-1",
		DynamoDB: host.StreamRecord{SequenceNumber: "100", NewImage: h.EventItem(evs[0]), StreamViewType: "NEW_IMAGE"}}}})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := fn(ctx, payload)
	if err != nil {
		log.Fatal(err)
	}
	row, _, err := h.Row(ctx, "summaries", ordersummary.RowKey("o-1"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("batchItemFailures:", len(resp.BatchItemFailures))
	fmt.Println("status:", row["status"].Str)
	// Output:
	// batchItemFailures: 0
	// status: placed
}

func createTable(ctx context.Context, endpoint, name string) {
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}})
	if err != nil {
		log.Fatal(err)
	}
}
