package ddblocal

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

func TestFaults_ScriptRatesAndUnprocessed(t *testing.T) {
	srv := startServer(t, Options{Faults: FaultConfig{Script: []ScriptedFault{
		{Op: "PutItem", Code: FaultThroughput},
		{Op: "PutItem", Code: FaultInternal},
		{Op: "TransactWriteItems", Code: FaultTransactionConflict},
	}}})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "flt", false)
	put := &dynamodb.PutItemInput{TableName: aws.String("flt"), Item: map[string]types.AttributeValue{"pk": s("a")}}
	_, err := c.PutItem(ctx, put)
	var pte *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pte) {
		t.Fatalf("1st PutItem: want ProvisionedThroughputExceededException, got %v", err)
	}
	_, err = c.PutItem(ctx, put)
	var ise *types.InternalServerError
	if !errors.As(err, &ise) {
		t.Fatalf("2nd PutItem: want InternalServerError, got %v", err)
	}
	if _, err = c.PutItem(ctx, put); err != nil {
		t.Fatalf("3rd PutItem: script exhausted, want success, got %v", err)
	}
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("flt"), Item: map[string]types.AttributeValue{"pk": s("b")}}},
		{Put: &types.Put{TableName: aws.String("flt"), Item: map[string]types.AttributeValue{"pk": s("c")}}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "TransactionConflict" {
		t.Fatalf("TransactWriteItems conflict: %v", err)
	}
	// The SDK's retryer rides over an injected throttle.
	srv.SetFaults(FaultConfig{Script: []ScriptedFault{{Op: "GetItem", Code: FaultThrottling}}})
	if _, err := client(srv, 3).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("flt"), Key: map[string]types.AttributeValue{"pk": s("a")}}); err != nil {
		t.Fatalf("GetItem with retries: %v", err)
	}
	// Rates: every BatchGetItem key is left unprocessed.
	srv.SetFaults(FaultConfig{Rates: map[string]map[string]float64{"BatchGetItem": {FaultUnprocessed: 1}}})
	out, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"flt": {Keys: []map[string]types.AttributeValue{{"pk": s("a")}}}}})
	if err != nil || len(out.UnprocessedKeys["flt"].Keys) != 1 {
		t.Fatalf("BatchGetItem with every key throttled: %v %v", out, err)
	}
	// Half of them: some processed, the rest in UnprocessedKeys.
	srv.SetFaults(FaultConfig{Seed: 3, Rates: map[string]map[string]float64{"BatchGetItem": {FaultUnprocessed: 0.5}}})
	var keys []map[string]types.AttributeValue
	for i := 0; i < 40; i++ {
		keys = append(keys, map[string]types.AttributeValue{"pk": s(fmt.Sprint("k", i))})
	}
	out, err = c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"flt": {Keys: keys}}})
	if err != nil || len(out.UnprocessedKeys["flt"].Keys) == 0 || len(out.UnprocessedKeys["flt"].Keys) == 40 {
		t.Fatalf("BatchGetItem with half the keys throttled: %v %v", out, err)
	}
	srv.SetFaults(FaultConfig{})
	out, err = c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"flt": {Keys: []map[string]types.AttributeValue{{"pk": s("a")}}}}})
	if err != nil || len(out.UnprocessedKeys) != 0 || len(out.Responses["flt"]) != 1 {
		t.Fatalf("BatchGetItem without faults: %v %v", out, err)
	}
	if st := srv.Stats(); st["PutItem"] != 3 || st["BatchGetItem"] != 3 {
		t.Fatalf("Stats = %v", st)
	}
}

func TestServer_MalformedRequests(t *testing.T) {
	srv := startServer(t, Options{})
	post := func(target, body string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, srv.Endpoint()+"/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", target)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(sign(req))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	cases := []struct{ target, body, want string }{
		{"DynamoDB_20120810.PutItem", `{"TableName":`, "SerializationException"},
		{"DynamoDB_20120810.PutItem", `[1,2]`, "SerializationException"},
		{"DynamoDB_20120810.PutItem", `{"TableName":"abc","Item":{"pk":{"S":1}}}`, "SerializationException"},
		{"DynamoDB_20120810.PutItem", `{"TableName":"abc","Item":{"pk":{}}}`, "ValidationException"},
		{"DynamoDB_20120810.NoSuchOp", `{}`, "UnknownOperationException"},
		{"", `{}`, "UnknownOperationException"},
		{"DynamoDB_20120810.GetItem", `{"TableName":"x"}`, "ValidationException"},
	}
	for _, tc := range cases {
		code, body, h := post(tc.target, tc.body)
		if code != 400 || !strings.Contains(body, "#"+tc.want+`"`) {
			t.Errorf("%s %s: %d %s, want 400 %s", tc.target, tc.body, code, body, tc.want)
		}
		if h.Get("x-amz-crc32") == "" || h.Get("x-amzn-RequestId") == "" {
			t.Errorf("missing x-amz-crc32 / x-amzn-RequestId headers: %v", h)
		}
	}
	// The SDK sees a typed API error for an unknown target.
	_, err := client(srv, 1).ListTables(ctxT(t), &dynamodb.ListTablesInput{Limit: aws.Int32(1000)})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" {
		t.Fatalf("ListTables Limit 1000: %v", err)
	}
}

func TestFaults_RatesRepeatableWithSeed(t *testing.T) {
	pattern := func() string {
		srv := startServer(t, Options{Faults: FaultConfig{Seed: 7, Rates: map[string]map[string]float64{"DescribeTable": {FaultThrottling: 0.5}}}})
		c := client(srv, 1)
		var b strings.Builder
		for i := 0; i < 40; i++ {
			_, err := c.DescribeTable(ctxT(t), &dynamodb.DescribeTableInput{TableName: aws.String("none")})
			var te interface{ ErrorCode() string }
			if errors.As(err, &te) && te.ErrorCode() == FaultThrottling {
				b.WriteByte('T')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b := pattern(), pattern()
	if a != b || !strings.Contains(a, "T") || !strings.Contains(a, ".") {
		t.Fatalf("patterns %s / %s: want equal, mixing faults and passes", a, b)
	}
}

func TestFaults_StaleReads(t *testing.T) {
	srv := startServer(t, Options{Faults: FaultConfig{StaleReads: time.Hour}})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "stale", false)
	key := map[string]types.AttributeValue{"pk": s("a")}
	for _, v := range []string{"1", "2"} {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("stale"), Item: map[string]types.AttributeValue{"pk": s("a"), "v": n(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	eventual, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("stale"), Key: key})
	if err != nil || eventual.Item != nil {
		t.Fatalf("eventually consistent read within the window: %v %v; want the item as before its first write (absent)", eventual.Item, err)
	}
	strong, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("stale"), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || strong.Item["v"].(*types.AttributeValueMemberN).Value != "2" {
		t.Fatalf("strongly consistent read: %v %v", strong.Item, err)
	}
	bg, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"stale": {Keys: []map[string]types.AttributeValue{key}}}})
	if err != nil || len(bg.Responses["stale"]) != 0 {
		t.Fatalf("eventually consistent BatchGetItem: %v %v", bg.Responses, err)
	}
	query := func(consistent bool) int32 {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("stale"), KeyConditionExpression: aws.String("pk = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")}, ConsistentRead: aws.Bool(consistent)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	if ev, co := query(false), query(true); ev != 0 || co != 1 {
		t.Fatalf("Query counts: eventual %d, consistent %d; want 0 and 1", ev, co)
	}
	srv.SetFaults(FaultConfig{})
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("stale"), Item: map[string]types.AttributeValue{"pk": s("a"), "v": n("3")}}); err != nil {
		t.Fatal(err)
	}
	eventual, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("stale"), Key: key})
	if err != nil || eventual.Item == nil {
		t.Fatalf("with StaleReads off an eventual read still saw stale data: %v %v", eventual.Item, err)
	}
}

func TestFaults_StaleReadsLagGlobalIndex(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "lag", false, func(in *dynamodb.CreateTableInput) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("byG"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}
	})
	put := func(pk, g string) {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("lag"), Item: map[string]types.AttributeValue{"pk": s(pk), "g": s(g)}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(g string) int32 {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("lag"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": s(g)}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	put("1", "old")
	srv.SetFaults(FaultConfig{StaleReads: time.Hour})
	put("1", "new") // moves between index partitions
	put("2", "new") // new item
	if o, nw := count("old"), count("new"); o != 1 || nw != 0 {
		t.Fatalf("lagging index: old=%d new=%d, want 1 and 0", o, nw)
	}
	srv.SetFaults(FaultConfig{})
	if o, nw := count("old"), count("new"); o != 0 || nw != 2 {
		t.Fatalf("index without lag: old=%d new=%d, want 0 and 2", o, nw)
	}
}
