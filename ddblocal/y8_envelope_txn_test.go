package ddblocal

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// txnBodies are TransactWriteItems bodies, the usual (the outbox's write)
// and the unusual: members twice, null, in another case, unknown, empty.
var txnBodies = []string{
	`{"TransactItems":[{"Put":{"TableName":"rows","Item":{"pk":{"S":"a"},"rev":{"N":"1"}},"ConditionExpression":"attribute_not_exists(pk)"}},{"Put":{"TableName":"rows","Item":{"pk":{"S":"a#o"},"n":{"N":"1"}}}}],"ClientRequestToken":"6f1c0a34-7a4e-4bd4-8d5e-6d0f3c1a2b3c"}`,
	`{"TransactItems":[{"Update":{"TableName":"t","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET #v = :v","ConditionExpression":"#v < :v","ExpressionAttributeNames":{"#v":"v"},"ExpressionAttributeValues":{":v":{"N":"2"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}},{"Delete":{"TableName":"t","Key":{"pk":{"S":"b"}}}},{"ConditionCheck":{"TableName":"t","Key":{"pk":{"S":"c"}},"ConditionExpression":"attribute_exists(pk)"}}],"ReturnConsumedCapacity":"TOTAL"}`,
	`{"TransactItems":[]}`,
	`{"TransactItems":null}`,
	`{"TransactItems":[null]}`,
	`{"TransactItems":[{}]}`,
	`{"TransactItems":[{"Put":null}]}`,
	`{"transactitems":[{"put":{"TableName":"t","Item":{"pk":{"S":"a"}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}},"Delete":{"TableName":"t","Key":{"pk":{"S":"a"}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}},"Put":{"ConditionExpression":"x"}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}}}],"TransactItems":[{"Delete":{"Key":{"pk":{"S":"b"}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}},"ReturnConsumedCapacity":"TOTAL"}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"},"bad":{}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}},"ExpressionAttributeValues":{":v":{"S":"a","N":"1"}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t\u00e9","Item":{"pk":{"S":"a"}}}}]}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}}}],"ClientRequestToken":null}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}}}],"ReturnItemCollectionMetrics":"SIZE"}`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}}} ,  { "Delete" : { "TableName" : "t" , "Key" : { "pk" : { "N" : "1" } } } } ] }`,
	`{"TransactItems":[{"Put":{"TableName":"t","Item":{"pk":{"S":"a"}}}}]} x`,
}

// TestY8_EnvelopeReaderDecodesTransactionsAsEncodingJSON decodes
// TransactWriteItems bodies through the envelope reader and through
// encoding/json: the inputs and the errors must be the same, and the
// usual bodies must be read by the reader, not given up on.
func TestY8_EnvelopeReaderDecodesTransactionsAsEncodingJSON(t *testing.T) {
	bodies := append([]string(nil), txnBodies...)
	rng := rand.New(rand.NewPCG(28, 9))
	ops := []string{
		`"Put":{"TableName":"t","Item":{"pk":{"S":"k"},"x":{"SS":["b","a"]}},"ConditionExpression":"attribute_not_exists(pk)"}`,
		`"Put":{"Item":{"pk":{"N":"1e400"}},"TableName":"t"}`,
		`"Delete":{"TableName":"t","Key":{"pk":{"S":"k"}},"ConditionExpression":"#n = :v","ExpressionAttributeNames":{"#n":"n"},"ExpressionAttributeValues":{":v":{"B":"AAE="}}}`,
		`"Update":{"TableName":"t","Key":{"pk":{"S":""}},"UpdateExpression":"REMOVE a"}`,
		`"ConditionCheck":{"TableName":"t","Key":{"pk":{"S":"k"}},"ConditionExpression":"attribute_exists(pk)","ReturnValuesOnConditionCheckFailure":"NONE"}`,
		`"Other":{"TableName":"t"}`,
	}
	tops := []string{`"ClientRequestToken":"tok"`, `"ReturnConsumedCapacity":"INDEXES"`, `"Other":1`}
	for range 300 {
		var items []string
		for range rng.IntN(5) {
			var ms []string
			for range 1 + rng.IntN(2) {
				ms = append(ms, ops[rng.IntN(len(ops))])
			}
			items = append(items, "{"+strings.Join(ms, ",")+"}")
		}
		ms := []string{`"TransactItems":[` + strings.Join(items, ",") + `]`}
		for range rng.IntN(3) {
			ms = append(ms, tops[rng.IntN(len(tops))])
		}
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		bodies = append(bodies, "{"+strings.Join(ms, ",")+"}")
	}
	for _, i := range []int{0, 1} {
		if ok, err := decodeEnvelope([]byte(txnBodies[i]), &transactWriteInput{}); !ok || err != nil {
			t.Errorf("%s: the envelope reader gave up (%v, %v)", txnBodies[i], ok, err)
		}
	}
	checkDecodesAsEncodingJSON[transactWriteInput](t, bodies)
}

// FuzzEnvelopeTransactions: whatever the body, the envelope reader and
// encoding/json decode a TransactWriteItems input alike.
func FuzzEnvelopeTransactions(f *testing.F) {
	fuzzDecodesAsEncodingJSON[transactWriteInput](f, txnBodies)
}
