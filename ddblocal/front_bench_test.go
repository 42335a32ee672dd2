package ddblocal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkFront measures a request through ddblocal's own front, in
// process, on one keep-alive loopback connection: the SDK's signed
// request bytes written as is, the answer read back. Its allocations are
// the server's (the client reuses its buffers), which BenchmarkServerCPU
// cannot show.
//
//	go test ./ddblocal -run '^$' -bench Front -benchmem
func BenchmarkFront(b *testing.B) {
	if !frontSupported {
		b.Skip("ddblocal's own front runs on Linux only")
	}
	srv, err := Start(context.Background(), Options{TTLInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.Endpoint(), "http://"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	var ans []byte
	raw := func(op, body string) []byte {
		req, _ := http.NewRequest(http.MethodPost, srv.Endpoint(), nil)
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Content-Type", contentType)
		sign(req)
		var w bytes.Buffer
		w.WriteString("POST / HTTP/1.1\r\nHost: " + req.Host + "\r\nUser-Agent: aws-sdk-go-v2/1.39.2 ua/2.1 os/linux lang/go#1.25 md/GOOS#linux md/GOARCH#amd64 api/dynamodb#1.50.5 m/E\r\n")
		w.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
		for _, k := range []string{"Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "Authorization", "Content-Type", "X-Amz-Content-Sha256", "X-Amz-Date", "X-Amz-Target"} {
			v := req.Header.Get(k)
			switch k {
			case "Amz-Sdk-Invocation-Id":
				v = "8a6b0d5e-3f0c-4b6e-9d0a-1c2b3d4e5f60"
			case "Amz-Sdk-Request":
				v = "attempt=1; max=3"
			}
			w.WriteString(k + ": " + v + "\r\n")
		}
		w.WriteString("Accept-Encoding: identity\r\n\r\n" + body)
		return w.Bytes()
	}
	// call writes a request and reads its answer, returning its status.
	call := func(req []byte) (int, error) {
		if _, err := conn.Write(req); err != nil {
			return 0, err
		}
		ans = ans[:0]
		n := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return 0, err
			}
			ans = append(ans, line...)
			if len(line) == 2 {
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		if _, err := br.Discard(n); err != nil {
			return 0, err
		}
		st, _ := strconv.Atoi(string(ans[9:12]))
		return st, nil
	}
	if st, err := call(raw("CreateTable", `{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}`)); err != nil || st != 200 {
		b.Fatalf("CreateTable: %d %v", st, err)
	}
	// the item of BenchmarkServerCPU (cpuItem), as the SDK encodes it
	item := func(pk string, i int) string {
		return fmt.Sprintf(`{"count":{"N":"%d"},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}},"name":{"S":"item-name-with-some-length"},"pk":{"S":%q},"sk":{"N":"%d"},"tags":{"SS":["a","b","c"]}}`, i*7, pk, i)
	}
	for i := range 200 {
		if st, err := call(raw("PutItem", `{"Item":`+item("g", i)+`,"TableName":"bench"}`)); err != nil || st != 200 {
			b.Fatalf("PutItem: %d %v", st, err)
		}
	}
	cases := []struct{ name, op, body string }{
		{"GetItem", "GetItem", `{"ConsistentRead":true,"Key":{"pk":{"S":"g"},"sk":{"N":"42"}},"TableName":"bench"}`},
		{"PutItem", "PutItem", `{"Item":` + item("w", 7) + `,"TableName":"bench"}`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			req := raw(c.op, c.body)
			b.ReportAllocs()
			for b.Loop() {
				if st, err := call(req); err != nil || st != 200 {
					b.Fatalf("%s: %d %v", c.op, st, err)
				}
			}
		})
	}
}
