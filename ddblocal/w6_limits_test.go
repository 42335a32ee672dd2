package ddblocal

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// allocated returns the bytes the process has allocated so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// leastAllocated runs f twice and returns the fewer bytes allocated while
// it ran: the count is the process's, and other goroutines only add to it.
func leastAllocated(f func()) uint64 {
	least := uint64(1<<63 - 1)
	for range 2 {
		before := allocated()
		f()
		least = min(least, allocated()-before)
	}
	return least
}

// TestW6_HugeListIsRefusedBeforeItIsBuilt: a 15 MB PutItem whose item
// holds a 1.5-million-element list is refused with DynamoDB's item-size
// error, and serving it allocates little more than its body.
func TestW6_HugeListIsRefusedBeforeItIsBuilt(t *testing.T) {
	srv := startServer(t, Options{})
	mkTable(t, client(srv, 1), "mem", false)
	body := hugeListBody("mem", 1_500_000)
	var (
		status int
		resp   []byte
		err    error
	)
	took := leastAllocated(func() {
		status, resp, err = postRaw(ctxT(t), &http.Client{}, srv.Endpoint(), "PutItem", bytes.NewReader(body), int64(len(body)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantItemTooLarge(t, status, resp)
	t.Logf("a %.1f MB body: %d MiB allocated", float64(len(body))/1e6, took/mib)
	if limit := uint64(len(body)) + 24*mib; took > limit {
		t.Fatalf("serving a %.1f MB body allocated %d MiB; want under %d MiB", float64(len(body))/1e6, took/mib, limit/mib)
	}
}

// TestW6_DeepNestingIsRefusedAtLevel33: an attribute nested 2,000 levels
// deep is refused with DynamoDB's nesting error at level 33, without
// decoding the levels below.
func TestW6_DeepNestingIsRefusedAtLevel33(t *testing.T) {
	srv := startServer(t, Options{})
	mkTable(t, client(srv, 1), "deep", false)
	const levels = 2000
	body := `{"TableName":"deep","Item":{"pk":{"S":"a"},"d":` + strings.Repeat(`{"L":[`, levels) + `{"S":"x"}` + strings.Repeat(`]}`, levels) + `}}`
	var (
		status int
		resp   string
	)
	took := leastAllocated(func() { status, resp = rawCall(t, srv, "DynamoDB_20120810.PutItem", body) })
	if status != 400 || !strings.Contains(resp, "ValidationException") || !strings.Contains(resp, "Nesting Levels have exceeded supported limits") {
		t.Fatalf("answer %d %s; want DynamoDB's nesting ValidationException", status, resp)
	}
	if limit := uint64(4 * mib); took > limit {
		t.Fatalf("refusing %d levels allocated %d KiB; want under %d KiB", levels, took>>10, limit>>10)
	}
}

// TestW6_ExpressionValueOver400KBIsRefused: an ExpressionAttributeValues
// value over 400 KB is refused with DynamoDB's message naming it.
func TestW6_ExpressionValueOver400KBIsRefused(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	mkTable(t, c, "vals", false)
	_, err := c.Query(ctxT(t), &dynamodb.QueryInput{TableName: aws.String("vals"), KeyConditionExpression: aws.String("pk = :p"),
		FilterExpression:          aws.String("contains(v, :big)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("a"), ":big": s(strings.Repeat("x", 410_000))}})
	var ae smithy.APIError
	want := "ExpressionAttributeValues contains invalid value: Item size has exceeded the maximum allowed size for key :big"
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || ae.ErrorMessage() != want {
		t.Fatalf("Query with a 410 KB value: %v; want ValidationException %q", err, want)
	}
}

// TestW6_BodyOverLimitIsRefusedBeforeItIsRead: a request declaring more
// than 16 MB is answered 413 at once; the server does not wait for, or
// read, its body.
func TestW6_BodyOverLimitIsRefusedBeforeItIsRead(t *testing.T) {
	srv := startServer(t, Options{ReadTimeout: time.Minute})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: ddblocal\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n{\"TableName\":", contentType, maxBody+1)
	// The rest of the body never comes: only an answer that does not wait
	// for it arrives before the deadline (the server's own ReadTimeout is
	// a minute).
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a 16 MB + 1 declared body: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
}
