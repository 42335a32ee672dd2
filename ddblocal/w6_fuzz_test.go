package ddblocal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
)

// requestInputs are the operations whose requests carry attribute
// values, with the structs their bodies decode into.
var requestInputs = []struct {
	op  string
	new func() any
}{
	{"PutItem", func() any { return new(putItemInput) }},
	{"UpdateItem", func() any { return new(updateItemInput) }},
	{"DeleteItem", func() any { return new(deleteItemInput) }},
	{"GetItem", func() any { return new(getItemInput) }},
	{"Query", func() any { return new(queryInput) }},
	{"Scan", func() any { return new(scanInput) }},
	{"BatchWriteItem", func() any { return new(batchWriteInput) }},
	{"BatchGetItem", func() any { return new(batchGetInput) }},
	{"TransactWriteItems", func() any { return new(transactWriteInput) }},
	{"TransactGetItems", func() any { return new(transactGetInput) }},
	{"CreateTable", func() any { return new(createTableInput) }},
}

// decodeBody runs the checks and the decoding a body of op's request goes
// through before its operation runs.
func decodeBody(op string, body []byte, v any) error {
	if !json.Valid(body) {
		return nil // refused by ServeHTTP before anything is decoded
	}
	shape := reqshape.Ops[op]
	body, err := checkRequest(context.Background(), shape, body, false)
	if err != nil {
		return err
	}
	err = decode(context.Background(), body, v)
	if _, ok := err.(*undecodable); ok {
		if body, err = reqshape.Normalize(body, shape); err == nil {
			err = decode(context.Background(), body, v)
		}
	}
	return err
}

// decodeBound is what decoding a body of n bytes may allocate: the
// request memory charged for it, less the body itself.
func decodeBound(n int) uint64 {
	return uint64(decodeCost(int64(n)) - int64(n))
}

// checkDecodeMemory decodes body as op's request and fails if that
// allocates more than the request memory it is charged allows.
func checkDecodeMemory(t *testing.T, which int, body []byte) {
	t.Helper()
	ri := requestInputs[which%len(requestInputs)]
	// The count of allocated bytes is the process's: other goroutines
	// (the fuzzing engine's) add to it now and then, never take from it,
	// so the least of a few runs is the decoding's own.
	got := uint64(1<<63 - 1)
	for range 3 {
		v := ri.new()
		before := allocated()
		_ = decodeBody(ri.op, body, v)
		got = min(got, allocated()-before)
		if got <= decodeBound(len(body)) {
			return
		}
	}
	if got > decodeBound(len(body)) {
		t.Fatalf("decoding a %d-byte %s body allocated %d bytes, over the %d its request memory charge allows",
			len(body), ri.op, got, decodeBound(len(body)))
	}
}

// worstBodies are the shapes that build the most per byte of JSON: lists
// and maps of empty values, map members with empty names, and the
// request fields outside attribute values.
func worstBodies(n int) map[string][]byte {
	rep := func(s string) string { return strings.Repeat(s, n/len(s)) }
	list := func(elem string) string { return `{"L":[` + strings.TrimSuffix(rep(elem+","), ",") + `]}` }
	bodies := map[string]string{
		"PutItem/emptyLists":       `{"TableName":"t","Item":{"pk":{"S":"a"},"l":` + list(`{"L":[]}`) + `}}`,
		"PutItem/emptyMaps":        `{"TableName":"t","Item":{"pk":{"S":"a"},"l":` + list(`{"M":{}}`) + `}}`,
		"PutItem/emptyStrings":     `{"TableName":"t","Item":{"pk":{"S":"a"},"l":` + list(`{"S":""}`) + `}}`,
		"PutItem/nulls":            `{"TableName":"t","Item":{"pk":{"S":"a"},"l":` + list(`{"NULL":true}`) + `}}`,
		"PutItem/mapMembers":       `{"TableName":"t","Item":{"pk":{"S":"a"},"m":{"M":{` + strings.TrimSuffix(manyMembers(n/12, `{"S":""}`), ",") + `}}}}`,
		"PutItem/attributes":       `{"TableName":"t","Item":{` + strings.TrimSuffix(manyMembers(n/12, `{"S":""}`), ",") + `}}`,
		"PutItem/stringSet":        `{"TableName":"t","Item":{"pk":{"S":"a"},"ss":{"SS":[` + strings.TrimSuffix(rep(`"a",`), ",") + `]}}}`,
		"PutItem/names":            `{"TableName":"t","Item":{"pk":{"S":"a"}},"ExpressionAttributeNames":{` + strings.TrimSuffix(manyNames(n/10), ",") + `}}`,
		"GetItem/attributes":       `{"TableName":"t","Key":{"pk":{"S":"a"}},"AttributesToGet":[` + strings.TrimSuffix(rep(`"a",`), ",") + `]}`,
		"TransactWriteItems/empty": `{"TransactItems":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}`,
		"TransactGetItems/empty":   `{"TransactItems":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}`,
		"BatchWriteItem/empty":     `{"RequestItems":{"t":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}}`,
		"BatchGetItem/keys":        `{"RequestItems":{"t":{"Keys":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}}}`,
		"CreateTable/gsis":         `{"TableName":"t","GlobalSecondaryIndexes":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}`,
		"CreateTable/keySchema":    `{"TableName":"t","KeySchema":[` + strings.TrimSuffix(rep(`{},`), ",") + `]}`,
		"GetItem/emptyNames":       `{"TableName":"t","Key":{"pk":{"S":"a"}},"AttributesToGet":[` + strings.TrimSuffix(rep(`"",`), ",") + `]}`,
		"PutItem/values":           `{"TableName":"t","Item":{"pk":{"S":"a"}},"ExpressionAttributeValues":{` + strings.TrimSuffix(manyMembers(n/14, `{"L":[]}`), ",") + `}}`,
	}
	out := map[string][]byte{}
	for k, v := range bodies {
		out[k] = []byte(v)
	}
	return out
}

// manyMembers is n JSON object members with distinct short names.
func manyMembers(n int, value string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`"` + shortName(i) + `":` + value + `,`)
	}
	return b.String()
}

func manyNames(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`"#` + shortName(i) + `":"a",`)
	}
	return b.String()
}

func shortName(i int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	s := ""
	for {
		s += string(alphabet[i%len(alphabet)])
		i /= len(alphabet)
		if i == 0 {
			return s
		}
	}
}

// TestW6_DecodingStaysWithinItsRequestMemoryCharge: the shapes that cost
// the most per byte stay within what the request memory charges.
func TestW6_DecodingStaysWithinItsRequestMemoryCharge(t *testing.T) {
	// 300 KB: past the count of members outside attribute values, which
	// only attribute values may be; 29 KB: just within it.
	bodies := worstBodies(300_000)
	for name, body := range worstBodies(29_000) {
		bodies[name+"/small"] = body
	}
	for name, body := range bodies {
		which := 0
		for i, ri := range requestInputs {
			if strings.HasPrefix(name, ri.op+"/") {
				which = i
			}
		}
		v := requestInputs[which].new()
		before := allocated()
		err := decodeBody(requestInputs[which].op, body, v)
		got := allocated() - before
		t.Logf("%-22s %7d bytes: %5.1f allocated per byte (%v)", name, len(body), float64(got)/float64(len(body)), err)
		checkDecodeMemory(t, which, body)
	}
}

// FuzzDecodeRequest: decoding any body as any operation's request
// allocates at most what the request memory charges for a body of its
// length. Seeds: testdata/fuzz/FuzzDecodeRequest and worstBodies.
func FuzzDecodeRequest(f *testing.F) {
	for name, body := range worstBodies(2000) {
		for i, ri := range requestInputs {
			if strings.HasPrefix(name, ri.op+"/") {
				f.Add(uint8(i), body)
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		if len(body) > maxBody {
			return
		}
		checkDecodeMemory(t, int(which), body)
	})
}
