package ddblocal

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkServeHTTP measures the server's own work per request (reading
// the body, decoding, the operation, the answer) without a network or a
// client: requests go straight to ServeHTTP.
func BenchmarkServeHTTP(b *testing.B) {
	srv, err := Start(context.Background(), Options{TTLInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	call := func(op, body string) int {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, withAuth(req))
		if w.Code != 200 {
			b.Logf("%s: %s", op, w.Body.String())
		}
		return w.Code
	}
	if code := call("CreateTable", `{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}`); code != 200 {
		b.Fatalf("CreateTable: %d", code)
	}
	item := func(pk string, sk int) string {
		return fmt.Sprintf(`{"pk":{"S":%q},"sk":{"N":"%d"},"name":{"S":"a name of some length"},"price":{"N":"12.50"},"tags":{"SS":["a","b","c"]},"m":{"M":{"x":{"N":"1"},"y":{"L":[{"S":"p"},{"BOOL":true}]}}}}`, pk, sk)
	}
	for i := range 20 {
		call("PutItem", `{"TableName":"bench","Item":`+item("q", i)+`}`)
	}
	var big bytes.Buffer
	big.WriteString(`{"TableName":"bench","Item":{"pk":{"S":"big"},"sk":{"N":"1"},"l":{"L":[`)
	for i := range 3000 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"M":{"id":{"N":"%d"},"v":{"S":"value %d"}}}`, i, i)
	}
	big.WriteString(`]}}}`)
	cases := []struct{ name, op, body string }{
		{"PutItem", "PutItem", `{"TableName":"bench","Item":` + item("p", 1) + `,"ConditionExpression":"attribute_not_exists(pk) OR price < :p","ExpressionAttributeValues":{":p":{"N":"100"}}}`},
		{"GetItem", "GetItem", `{"TableName":"bench","Key":{"pk":{"S":"q"},"sk":{"N":"3"}},"ConsistentRead":true}`},
		{"Query20", "Query", `{"TableName":"bench","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"q"}}}`},
		{"TransactWriteItems4", "TransactWriteItems", `{"TransactItems":[{"Put":{"TableName":"bench","Item":` + item("t", 1) + `}},{"Put":{"TableName":"bench","Item":` + item("t", 2) + `}},{"Put":{"TableName":"bench","Item":` + item("t", 3) + `}},{"Put":{"TableName":"bench","Item":` + item("t", 4) + `}}]}`},
		{"PutItem140KB", "PutItem", big.String()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if code := call(c.op, c.body); code != 200 {
					b.Fatalf("%s: %d", c.op, code)
				}
			}
		})
	}
}

// BenchmarkRefuseHugeList measures what refusing the 15 MB, 1.5-million-
// element PutItem costs (ServeHTTP, no network), and what one pass over
// such a body costs (checkRequest, which skips the item): the price a
// separate pre-pass before decoding would add to every body.
func BenchmarkRefuseHugeList(b *testing.B) {
	srv, err := Start(context.Background(), Options{TTLInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	body := hugeListBody("mem", 1_500_000)
	req := func(op, body string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		r.Header.Set("Content-Type", contentType)
		return withAuth(r)
	}
	srv.ServeHTTP(httptest.NewRecorder(), req("CreateTable", `{"TableName":"mem","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}`))
	b.Run("ServeHTTP", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req("PutItem", string(body)))
			if w.Code != 400 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
	b.Run("OnePass", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := checkRequest(context.Background(), reqshape.Ops["PutItem"], body, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchAuth is the SigV4 Authorization header of a signed request (its
// signature is not checked: ddblocal checks the header's shape), set as
// is so that signing does not count in the server's cost.
const benchAuth = "AWS4-HMAC-SHA256 Credential=AKIDBENCH/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=4c0b5a3f1ec52b4c0ba2e5d3c9b1f6a7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3"

func withAuth(r *http.Request) *http.Request {
	r.Header.Set("Authorization", benchAuth)
	r.Header.Set("X-Amz-Date", "20260101T000000Z")
	return r
}
