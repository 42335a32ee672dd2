package ddblocal

import (
	"encoding/json"
	"fmt"
	"github.com/dynafold/dynafold/abi"
	"math/rand/v2"
	"strings"
	"testing"
)

// queryBodies are Query bodies, the usual (a gap's read, the outbox's
// read) and the unusual: numbers encoding/json refuses for Limit, nulls,
// legacy parameters, members twice or in another case.
var queryBodies = []string{
	`{"TableName":"events","KeyConditionExpression":"#s = :s AND #v BETWEEN :lo AND :hi","ExpressionAttributeNames":{"#s":"streamId","#v":"version"},"ExpressionAttributeValues":{":s":{"S":"Order#1"},":lo":{"N":"1"},":hi":{"N":"8"}},"ConsistentRead":true}`,
	`{"TableName":"rows","KeyConditionExpression":"pk = :pk AND begins_with(sk, :o)","ExpressionAttributeValues":{":pk":{"S":"a"},":o":{"S":"outbox#"}},"ConsistentRead":true,"Limit":1,"ScanIndexForward":false,"ProjectionExpression":"sk"}`,
	`{"TableName":"t","IndexName":"gsi","Select":"COUNT","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"N":"1"}},"FilterExpression":"attribute_exists(x)","ExclusiveStartKey":{"pk":{"S":"a"},"g":{"N":"1"}},"ReturnConsumedCapacity":"TOTAL"}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":1.5}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":1e2}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":-3}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":0}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":123456789012345678901234}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":null,"ScanIndexForward":null}`,
	`{"TableName":"t","KeyConditions":{"pk":{"AttributeValueList":[{"S":"a"}],"ComparisonOperator":"EQ"}}}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"AttributesToGet":["a"]}`,
	`{"tablename":"t","keyconditionexpression":"pk = :p"}`,
	`{"TableName":"t","Limit":2,"Limit":3,"ScanIndexForward":true,"ScanIndexForward":false,"IndexName":"a","IndexName":"b"}`,
	`{"TableName":"t","ExclusiveStartKey":{"pk":{}}}`,
	`{"TableName":"t","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}}} x`,
}

// TestY8_EnvelopeReaderDecodesQueriesAsEncodingJSON decodes Query bodies
// through the envelope reader and through encoding/json: the inputs and
// the errors must be the same, and the usual bodies must be read by the
// reader, not given up on.
func TestY8_EnvelopeReaderDecodesQueriesAsEncodingJSON(t *testing.T) {
	bodies := append([]string(nil), queryBodies...)
	rng := rand.New(rand.NewPCG(28, 10))
	parts := []string{`"TableName":"t"`, `"IndexName":"i"`, `"Select":"ALL_ATTRIBUTES"`, `"Limit":7`, `"Limit":-0`, `"Limit":07`,
		`"ConsistentRead":true`, `"ExclusiveStartKey":{"pk":{"S":"k"},"sk":{"N":"-1.50"}}`, `"ProjectionExpression":"a.b[0]"`,
		`"FilterExpression":"#n <> :v"`, `"KeyConditionExpression":"pk = :v"`, `"ScanIndexForward":false`,
		`"ExpressionAttributeNames":{"#n":"n"}`, `"ExpressionAttributeValues":{":v":{"B":"AAE="}}`, `"ReturnConsumedCapacity":"INDEXES"`,
		`"QueryFilter":{}`, `"Other":"x"`}
	for range 300 {
		var ms []string
		for range 1 + rng.IntN(7) {
			ms = append(ms, parts[rng.IntN(len(parts))])
		}
		bodies = append(bodies, "{"+strings.Join(ms, ",")+"}")
	}
	for _, i := range []int{0, 1, 2} {
		if ok, err := decodeEnvelope([]byte(queryBodies[i]), &queryInput{}); !ok || err != nil {
			t.Errorf("%s: the envelope reader gave up (%v, %v)", queryBodies[i], ok, err)
		}
	}
	checkDecodesAsEncodingJSON[queryInput](t, bodies)
}

// FuzzEnvelopeQueries: whatever the body, the envelope reader and
// encoding/json decode a Query input alike.
func FuzzEnvelopeQueries(f *testing.F) {
	fuzzDecodesAsEncodingJSON[queryInput](f, queryBodies)
}

// BenchmarkDecodeRequest decodes the usual TransactWriteItems, Query and
// BatchGetItem bodies (the outbox's write, a gap's read, a batch's read of
// 100 rows) through the envelope reader
// and through encoding/json, side by side:
//
//	go test ./ddblocal -run '^$' -bench DecodeRequest -benchmem
func BenchmarkDecodeRequest(b *testing.B) {
	cases := []struct {
		name string
		body string
		mk   func() any
	}{
		{"TransactWriteItems", txnBodies[0], func() any { return &transactWriteInput{} }},
		{"Query", queryBodies[0], func() any { return &queryInput{} }},
		{"BatchGetItem", batchGet100(), func() any { return &batchGetInput{} }},
	}
	for _, c := range cases {
		body := []byte(c.body)
		b.Run(c.name+"/envelope", func(b *testing.B) {
			for b.Loop() {
				if err := unmarshal(body, c.mk()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			for b.Loop() {
				if err := json.Unmarshal(body, c.mk()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// batchGet100 is a batch's read of 100 rows.
func batchGet100() string {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf(`{"pk":{"S":"Order#c100-0-%d"},"sk":{"S":"Order"}}`, i)
	}
	return `{"RequestItems":{"rows":{"Keys":[` + strings.Join(keys, ",") + `],"ConsistentRead":true}}}`
}

// BenchmarkBatchKeyIdentity: a BatchGetItem's duplicate check, per key.
//
//	go test ./ddblocal -run '^$' -bench BatchKeyIdentity -benchmem
func BenchmarkBatchKeyIdentity(b *testing.B) {
	k := abi.Item{"pk": abi.S("Order#c100-0-17"), "sk": abi.S("Order")}
	b.Run("keyString", func(b *testing.B) {
		for b.Loop() {
			_ = keyString(k)
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			_ = keyJSON(k)
		}
	})
}
