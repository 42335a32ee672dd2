package ddblocal

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// envelopeBodies are request bodies of the hot item operations, the usual
// and the unusual: escapes, nulls, repeated and unknown members, names in
// another case, values DynamoDB refuses.
var envelopeBodies = []string{
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ConsistentRead":true}`,
	` { "TableName" : "t1" , "Key" : { "pk" : { "S" : "a\"b" } } , "ConsistentRead" : false } `,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ProjectionExpression":"#a, b","ExpressionAttributeNames":{"#a":"x"}}`,
	`{"TableName":"t\u00e9","Key":{"pk":{"S":"a"}}}`,
	`{"TableName":"té","Key":{"pk":{"S":"é"}}}`,
	`{"TableName":null,"Key":{"pk":{"S":"a"}}}`,
	`{"TableName":"t1","Key":null}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ConsistentRead":null}`,
	`{"tablename":"t1","key":{"pk":{"S":"a"}}}`,
	`{"TableName":"t1","TableName":"t2","Key":{"pk":{"S":"a"}},"Key":{"pk":{"N":"1"}}}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"Unknown":[1,{"a":"}"}]}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ExpressionAttributeNames":{"#a":"x"},"ExpressionAttributeNames":{"#b":"y"}}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ExpressionAttributeNames":{}}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"ExpressionAttributeNames":{"#a":"x\n"}}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"},"n":{"N":"1"},"ss":{"SS":["a","b"]},"m":{"M":{"l":{"L":[{"BOOL":true},{"NULL":true}]}}}},"ConditionExpression":"attribute_not_exists(pk)","ReturnValues":"ALL_OLD","ReturnConsumedCapacity":"TOTAL"}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"},"bad":{}}}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"},"bad":{"S":"a","N":"1"}}}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"},"b":{"B":"not base64!"}}}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"}},"ConditionExpression":"v = :v","ExpressionAttributeValues":{":v":{"N":"1"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"}},"ExpressionAttributeValues":{":v":{}}}`,
	`{"TableName":"t1","Item":{"pk":{"S":"a"}},"Expected":{"a":{"Exists":false}}}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET v = v + :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnValues":"ALL_NEW"}`,
	`{"TableName":"t1","Key":{"pk":{"S":"a"}},"AttributeUpdates":{"v":{"Action":"PUT","Value":{"S":"x"}}}}`,
	`{}`,
	`{"TableName":"t1"} x`,
}

// TestY8_EnvelopeReaderDecodesAsEncodingJSON decodes bodies into the
// inputs the envelope reader reads, through it and through
// encoding/json: the inputs and the errors must be the same.
func TestY8_EnvelopeReaderDecodesAsEncodingJSON(t *testing.T) {
	bodies := append([]string(nil), envelopeBodies...)
	// Random members in random order, some repeated.
	rng := rand.New(rand.NewPCG(28, 8))
	parts := []string{`"TableName":"tbl"`, `"Key":{"pk":{"S":"k"},"sk":{"N":"-1.50"}}`, `"Item":{"pk":{"S":"k"},"x":{"SS":["b","a"]}}`,
		`"ConsistentRead":true`, `"ConsistentRead":false`, `"ProjectionExpression":"a.b[0]"`, `"ConditionExpression":"#n <> :v"`,
		`"UpdateExpression":"REMOVE a"`, `"ExpressionAttributeNames":{"#n":"n","#m":"ü"}`, `"ExpressionAttributeValues":{":v":{"B":"AAE="}}`,
		`"ReturnValues":"NONE"`, `"ReturnConsumedCapacity":"INDEXES"`, `"ReturnValuesOnConditionCheckFailure":"NONE"`,
		`"Key":{"pk":{"S":""}}`, `"Item":{"pk":{"N":"1e400"}}`, `"ConsistentRead":null`, `"Other":"x"`}
	for range 300 {
		var ms []string
		for range 1 + rng.IntN(6) {
			ms = append(ms, parts[rng.IntN(len(parts))])
		}
		bodies = append(bodies, "{"+strings.Join(ms, ",")+"}")
	}
	inputs := []func() any{
		func() any { return &getItemInput{} },
		func() any { return &putItemInput{} },
		func() any { return &deleteItemInput{} },
		func() any { return &updateItemInput{} },
	}
	// The usual requests are read by the envelope reader, not given up on.
	for _, c := range []struct {
		in   enveloped
		body string
	}{{&getItemInput{}, envelopeBodies[2]}, {&putItemInput{}, envelopeBodies[14]}, {&putItemInput{}, envelopeBodies[18]}, {&updateItemInput{}, envelopeBodies[21]}} {
		if ok, err := decodeEnvelope([]byte(c.body), c.in); !ok || err != nil {
			t.Errorf("%T %s: the envelope reader gave up (%v, %v)", c.in, c.body, ok, err)
		}
	}
	for _, body := range bodies {
		if !json.Valid([]byte(body)) {
			continue // front refuses it before decode
		}
		for _, mk := range inputs {
			got, want := mk(), mk()
			gerr := unmarshal([]byte(body), got)
			werr := json.Unmarshal([]byte(body), want)
			if g, ok := got.(*getItemInput); ok {
				g.keyMap = nil // which map the key was read into (a reused one or not) is no part of the input
			}
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%T %s: error %v, encoding/json's %v", got, body, gerr, werr)
				continue
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%T %s:\n got %+v\nwant %+v", got, body, got, want)
			}
		}
	}
}

// decodeDiff decodes body into a new T through the envelope reader
// (unmarshal) and through encoding/json, and returns how the inputs or
// the errors differ ("" when they do not).
func decodeDiff[T any](body []byte) string {
	var got, want T
	gerr := unmarshal(body, &got)
	werr := json.Unmarshal(body, &want)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		return fmt.Sprintf("error %v, encoding/json's %v", gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("\n got %+v\nwant %+v", got, want)
	}
	return ""
}

// checkDecodesAsEncodingJSON checks decodeDiff on every body that is
// valid JSON (front refuses the others before decode).
func checkDecodesAsEncodingJSON[T any](t *testing.T, bodies []string) {
	t.Helper()
	for _, body := range bodies {
		if !json.Valid([]byte(body)) {
			continue
		}
		if d := decodeDiff[T]([]byte(body)); d != "" {
			t.Errorf("%s: %s", body, d)
		}
	}
}

// fuzzDecodesAsEncodingJSON fuzzes decodeDiff from seed bodies.
func fuzzDecodesAsEncodingJSON[T any](f *testing.F, seeds []string) {
	for _, b := range seeds {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		if d := decodeDiff[T](body); d != "" {
			t.Fatalf("%s: %s", body, d)
		}
	})
}
