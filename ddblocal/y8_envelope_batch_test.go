package ddblocal

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// batchGetBodies are BatchGetItem bodies, the usual (a batch's read of
// its rows) and the unusual: a table twice, nulls, legacy parameters,
// names in another case, keys of no valid type.
var batchGetBodies = []string{
	`{"RequestItems":{"rows":{"Keys":[{"pk":{"S":"Order#1"},"sk":{"S":"Order"}},{"pk":{"S":"Order#2"},"sk":{"S":"Order"}}],"ConsistentRead":true}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{"N":"1"}}],"ProjectionExpression":"#p, v","ExpressionAttributeNames":{"#p":"pk"}},"b":{"Keys":[]}},"ReturnConsumedCapacity":"TOTAL"}`,
	`{"RequestItems":{}}`,
	`{"RequestItems":null}`,
	`{"RequestItems":{"a":null}}`,
	`{"RequestItems":{"a":{"Keys":null}}}`,
	`{"RequestItems":{"a":{"Keys":[null]}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{}}]}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{"S":"x"}}]},"a":{"ConsistentRead":true}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{"S":"x"}}],"Keys":[{"pk":{"S":"y"}}]}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{"S":"x"}}],"AttributesToGet":["pk"]}}}`,
	`{"requestitems":{"a":{"keys":[{"pk":{"S":"x"}}]}}}`,
	`{"RequestItems":{"t\u00e9":{"Keys":[{"pk":{"S":"x"}}]}}}`,
	`{"RequestItems":{"a":{"Keys":[{"pk":{"S":"x"}}]}}} x`,
}

// TestY8_EnvelopeReaderDecodesBatchGetsAsEncodingJSON decodes BatchGetItem
// bodies through the envelope reader and through encoding/json: the
// inputs and the errors must be the same, and the usual bodies must be
// read by the reader, not given up on.
func TestY8_EnvelopeReaderDecodesBatchGetsAsEncodingJSON(t *testing.T) {
	bodies := append([]string(nil), batchGetBodies...)
	rng := rand.New(rand.NewPCG(28, 11))
	members := []string{`"Keys":[{"pk":{"S":"k"}},{"pk":{"N":"-1.50"}}]`, `"Keys":[{"pk":{"B":"AAE="},"sk":{"S":""}}]`, `"ConsistentRead":false`,
		`"ProjectionExpression":"a.b[0]"`, `"ExpressionAttributeNames":{"#n":"n"}`, `"Other":1`}
	for range 300 {
		var tables []string
		for i := range rng.IntN(4) {
			var ms []string
			for range rng.IntN(4) {
				ms = append(ms, members[rng.IntN(len(members))])
			}
			tables = append(tables, fmt.Sprintf(`"t%d":{%s}`, i%3, strings.Join(ms, ",")))
		}
		ms := []string{`"RequestItems":{` + strings.Join(tables, ",") + `}`}
		if rng.IntN(2) == 0 {
			ms = append(ms, `"ReturnConsumedCapacity":"INDEXES"`)
		}
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		bodies = append(bodies, "{"+strings.Join(ms, ",")+"}")
	}
	for _, i := range []int{0, 1} {
		if ok, err := decodeEnvelope([]byte(batchGetBodies[i]), &batchGetInput{}); !ok || err != nil {
			t.Errorf("%s: the envelope reader gave up (%v, %v)", batchGetBodies[i], ok, err)
		}
	}
	checkDecodesAsEncodingJSON[batchGetInput](t, bodies)
}

// TestY8_BatchKeyIdentityIsTheKeysJSON: two keys of a BatchGetItem have
// the same identity (a duplicate) exactly when their JSON is the same.
func TestY8_BatchKeyIdentityIsTheKeysJSON(t *testing.T) {
	vals := []abi.Value{abi.S("a"), abi.S("b"), abi.S(""), abi.S("a\x00"), abi.N("1"), abi.N("10"), abi.B([]byte("a")), abi.B(nil),
		abi.Bool(true), abi.Null(), abi.L(abi.S("a")), abi.M(abi.Item{"x": abi.S("a")})}
	names := []string{"pk", "sk", "p", "kp", "pk\x00"}
	rng := rand.New(rand.NewPCG(28, 12))
	var keys []abi.Item
	for range 2000 {
		k := abi.Item{}
		for range 1 + rng.IntN(3) {
			k[names[rng.IntN(len(names))]] = vals[rng.IntN(len(vals))]
		}
		keys = append(keys, k)
	}
	dups := 0
	for i := range keys {
		for j := i + 1; j < len(keys) && j < i+40; j++ {
			same := keyJSON(keys[i]) == keyJSON(keys[j])
			if same {
				dups++
			}
			if got := keyString(keys[i]) == keyString(keys[j]); got != same {
				t.Fatalf("%v and %v: same identity %v, same JSON %v", keys[i], keys[j], got, same)
			}
		}
	}
	if dups < 100 {
		t.Fatalf("only %d pairs of equal keys compared; the test needs more", dups)
	}
}

// FuzzEnvelopeBatchGets: whatever the body, the envelope reader and
// encoding/json decode a BatchGetItem input alike.
func FuzzEnvelopeBatchGets(f *testing.F) {
	fuzzDecodesAsEncodingJSON[batchGetInput](f, batchGetBodies)
}
