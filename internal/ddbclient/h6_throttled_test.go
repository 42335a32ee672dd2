package ddbclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// A request DynamoDB throttles on every attempt reads as what it is and
// what to do, through the SDK's client and the host's own calls alike,
// where an operator saw the SDK's retry summary ("exceeded maximum number
// of attempts, 4, https response error StatusCode: 400 ...
// ProvisionedThroughputExceededException"); any other answer is left as
// it is.
func TestH6_ARequestThrottledOnEveryAttemptSaysSo(t *testing.T) {
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{Addr: "127.0.0.1:0", Faults: ddblocal.FaultConfig{Rates: map[string]map[string]float64{
		"DescribeTable": {"ProvisionedThroughputExceededException": 1},
		"GetItem":       {"ThrottlingException": 1},
		"Scan":          {"ValidationException": 1},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := ddbclient.NewClient(ctx, srv.Endpoint(), "us-east-1", func(o *dynamodb.Options) { o.Retryer = threeQuickAttempts() })
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("t")})
	te, ok := ddbclient.Throttled(err)
	if !ok || te.Operation != "DescribeTable" || te.Attempts != 3 || te.Code != "ProvisionedThroughputExceededException" {
		t.Fatalf("%v: throttled %v (%+v)", err, ok, te)
	}
	if got := ddbclient.Explain(err); !errors.As(got, &te) || !strings.Contains(got.Error(), "DynamoDB throttled DescribeTable on all 3 attempts") ||
		!strings.Contains(got.Error(), "raise the table's capacity") {
		t.Fatalf("explained as %q", got)
	}

	w := ddbclient.NewWireTo(srv.Endpoint(), ddbclient.HTTPClient(10), threeQuickAttempts())
	err = w.Call(ctx, "GetItem", []byte(`{"TableName":"t","Key":{"pk":{"S":"a"}}}`), func([]byte) error { return nil })
	if te, ok := ddbclient.Throttled(err); !ok || te.Operation != "GetItem" || te.Code != "ThrottlingException" {
		t.Fatalf("%v: throttled %v (%+v)", err, ok, te)
	}

	_, err = c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("t")})
	if _, ok := ddbclient.Throttled(err); ok || ddbclient.Explain(err) != err {
		t.Fatalf("%v is not throttling", err)
	}
}
