package ddblocal

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkCore measures the pieces of a GetItem's and a PutItem's
// handling that BenchmarkServerCPU's profile shows, without the socket:
// the head's parse (the SDK's head), the request core (Server.handle:
// checks, decode, the operation, its answer) and the answer's encoding.
//
//	go test ./ddblocal -run '^$' -bench Core -benchmem
func BenchmarkCore(b *testing.B) {
	benchCore(b, Options{TTLInterval: -1})
}

// BenchmarkCoreData is BenchmarkCore with a data directory (its log not
// synced): a write's staging in the log besides the request core.
func BenchmarkCoreData(b *testing.B) {
	benchCore(b, Options{TTLInterval: -1, DataDir: b.TempDir(), NoSync: true})
}

func benchCore(b *testing.B, opts Options) {
	srv, err := Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	s := srv
	req, _ := http.NewRequest(http.MethodPost, srv.Endpoint(), nil)
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
	req.Header.Set("Content-Type", contentType)
	sign(req)
	auth := authOf(req)
	var ans bytes.Buffer
	call := func(op, body string) reply {
		q := request{target: "DynamoDB_20120810." + op, contentType: contentType, auth: auth, ans: &ans}
		rep, ok := s.handle(context.Background(), "id", &q, []byte(body))
		if !ok || rep.status != 200 {
			b.Fatalf("%s: %d %s", op, rep.status, rep.body)
		}
		return rep
	}
	call("CreateTable", `{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}`)
	item := func(pk string, i int) string {
		return fmt.Sprintf(`{"count":{"N":"%d"},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}},"name":{"S":"item-name-with-some-length"},"pk":{"S":%q},"sk":{"N":"%d"},"tags":{"SS":["a","b","c"]}}`, i*7, pk, i)
	}
	for i := range 200 {
		call("PutItem", `{"Item":`+item("g", i)+`,"TableName":"bench"}`)
	}
	get := `{"ConsistentRead":true,"Key":{"pk":{"S":"g"},"sk":{"N":"42"}},"TableName":"bench"}`
	b.Run("handle/GetItem", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call("GetItem", get)
		}
	})
	b.Run("handle/PutItem", func(b *testing.B) {
		// one key, its count changed by every put (the same item again
		// would change nothing, and store nothing)
		bodies := make([]string, 256)
		for i := range bodies {
			bodies[i] = `{"Item":` + strings.Replace(item("w", 7), `"count":{"N":"49"}`, fmt.Sprintf(`"count":{"N":"%d"}`, i), 1) + `,"TableName":"bench"}`
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			call("PutItem", bodies[i%len(bodies)])
			i++
		}
	})
	// the same puts on a table with a NEW_AND_OLD_IMAGES stream: each put
	// also hands the stream registry a record of its old and new item
	call("CreateTable", `{"TableName":"benchs","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}}`)
	b.Run("handle/PutItemStream", func(b *testing.B) {
		bodies := make([]string, 256)
		for i := range bodies {
			bodies[i] = `{"Item":` + strings.Replace(item("w", 7), `"count":{"N":"49"}`, fmt.Sprintf(`"count":{"N":"%d"}`, i), 1) + `,"TableName":"benchs"}`
		}
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		i := 0
		for b.Loop() {
			call("PutItem", bodies[i%len(bodies)])
			i++
		}
		// the heap the puts left live: their stream records (the table
		// holds one item)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "live-B/op")
	})
	b.Run("answer/GetItem", func(b *testing.B) {
		out, err := getItem(s, context.Background(), []byte(get))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalAnswer(&ans, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parseHead", func(b *testing.B) {
		var w bytes.Buffer
		w.WriteString("POST / HTTP/1.1\r\nHost: " + req.Host + "\r\nUser-Agent: aws-sdk-go-v2/1.39.2 ua/2.1 os/linux lang/go#1.25 md/GOOS#linux md/GOARCH#amd64 api/dynamodb#1.50.5 m/E\r\nContent-Length: 77\r\n")
		for _, k := range []string{"Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "Authorization", "Content-Type", "X-Amz-Content-Sha256", "X-Amz-Date", "X-Amz-Target"} {
			w.WriteString(k + ": " + req.Header.Get(k) + "x\r\n")
		}
		w.WriteString("Accept-Encoding: identity\r\n\r\n")
		h := w.Bytes()
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := parseHead(h); !ok {
				b.Fatal("parseHead refused the SDK's head")
			}
		}
	})
}
