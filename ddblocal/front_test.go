package ddblocal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

// frontPair starts two servers of the same options and clock: one with
// ddblocal's own front, one served by net/http alone.
func frontPair(t *testing.T, opts Options) (fast, std *Server) {
	t.Helper()
	if !frontSupported {
		t.Skip("ddblocal's own front runs on Linux only")
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { return at }
	fast = startServer(t, opts)
	opts.netHTTPOnly = true
	std = startServer(t, opts)
	if fast.fast == nil || std.fast != nil {
		t.Fatal("the pair is not one front of each kind")
	}
	return fast, std
}

// recordingConn keeps what is written to it.
type recordingConn struct {
	net.Conn
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (c recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.buf.Write(p)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// sdkRequests runs calls through the SDK's DynamoDB and Kinesis clients
// against srv and returns the bytes of each request as the SDK sent them.
func sdkRequests(t *testing.T, srv *Server) [][]byte {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	tr := &http.Transport{MaxConnsPerHost: 1, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return recordingConn{c, &mu, &buf}, nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	creds := credentials.NewStaticCredentialsProvider("AKID", "secret", "")
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds,
		HTTPClient: &http.Client{Transport: tr}, RetryMaxAttempts: 1})
	k := kinesis.New(kinesis.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds,
		HTTPClient: &http.Client{Transport: tr}, RetryMaxAttempts: 1})
	ctx := ctxT(t)
	var out [][]byte
	take := func(string, ...any) {
		mu.Lock()
		out = append(out, bytes.Clone(buf.Bytes()))
		buf.Reset()
		mu.Unlock()
	}
	item := map[string]types.AttributeValue{"pk": s("a"), "n": n("1"), "l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("2")}}}
	mkTable(t, c, "front", false)
	take("CreateTable")
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("front"), Item: item})
	take("PutItem", err)
	_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("front"), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	take("PutItem conditional", err)
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("front"), Key: map[string]types.AttributeValue{"pk": s("a")}, ConsistentRead: aws.Bool(true)})
	take("GetItem", err)
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("missing"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	take("GetItem missing table", err)
	_, err = c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("front"), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("a")}})
	take("Query", err)
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("front"), Key: map[string]types.AttributeValue{"pk": s("a")},
		UpdateExpression: aws.String("SET n = n + :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")}, ReturnValues: types.ReturnValueAllNew})
	take("UpdateItem", err)
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("front"), Key: map[string]types.AttributeValue{"pk": s("a")}, UpdateExpression: aws.String("SET")})
	take("UpdateItem invalid", err)
	_, err = c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("front"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	take("DeleteItem", err)
	_, err = k.ListStreams(ctx, &kinesis.ListStreamsInput{})
	take("Kinesis ListStreams", err)
	_, err = k.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String("missing")})
	take("Kinesis DescribeStream missing", err)
	return out
}

var (
	requestIDHeader = regexp.MustCompile(`(?m)^X-Amzn-Requestid: [0-9A-Z]{52}\r$`)
	dateHeader      = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)

	crcHeader = regexp.MustCompile(`(?m)^X-Amz-Crc32: ([0-9]+)\r$`)
	tableID   = regexp.MustCompile(`"TableId":"[-0-9a-f]{36}"`)
)

// normalized blanks out what differs from server to server in an answer:
// its request id, date, a table's id and with it the checksum (once
// checked).
func normalized(t *testing.T, raw []byte) string {
	t.Helper()
	r := requestIDHeader.ReplaceAllString(string(raw), "X-Amzn-Requestid: ID\r")
	r = dateHeader.ReplaceAllString(r, "Date: DATE\r")
	if m := crcHeader.FindStringSubmatch(r); m != nil {
		_, body, _ := strings.Cut(r, "\r\n\r\n")
		framed := !strings.Contains(r, "Transfer-Encoding: chunked") && !strings.HasPrefix(r, "HTTP/1.1 100 ")
		if want := strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 10); framed && m[1] != want {
			t.Errorf("x-amz-crc32 is %s, the body's is %s: %q", m[1], want, r)
		}
		r = crcHeader.ReplaceAllString(r, "X-Amz-Crc32: CRC\r")
	}
	return tableID.ReplaceAllString(r, `"TableId":"ID"`)
}

// readRawAnswer reads one answer of Content-Length framing, as sent.
func readRawAnswer(br *bufio.Reader) ([]byte, error) {
	var head bytes.Buffer
	length := 0
	for {
		line, err := br.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			return head.Bytes(), err
		}
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(br, body)
	return append(head.Bytes(), body...), err
}

// exchange sends raw on a new connection in pieces of at most piece bytes
// (all at once when 0), then reads n answers.
func exchange(t *testing.T, srv *Server, raw []byte, piece, n int) []string {
	t.Helper()
	conn := dial(t, srv)
	go func() {
		for len(raw) > 0 {
			k := len(raw)
			if piece > 0 && piece < k {
				k = piece
			}
			if _, err := conn.Write(raw[:k]); err != nil {
				return
			}
			raw = raw[k:]
		}
	}()
	br := bufio.NewReader(conn)
	var out []string
	for range n {
		a, err := readRawAnswer(br)
		if err != nil {
			t.Fatalf("reading answer %d: %v (so far %q)", len(out)+1, err, a)
		}
		out = append(out, normalized(t, a))
	}
	return out
}

// TestY8_FrontAnswersTheSDKsRequestsAsNetHTTP: the bytes of the SDK's
// requests, replayed to both fronts one connection each, get the same
// answers byte for byte (but the request id and date), and the own front
// serves them all itself.
func TestY8_FrontAnswersTheSDKsRequestsAsNetHTTP(t *testing.T) {
	rec, _ := frontPair(t, Options{})
	reqs := sdkRequests(t, rec)
	if len(reqs) != 11 {
		t.Fatalf("recorded %d requests, want 11", len(reqs))
	}
	fast, std := frontPair(t, Options{})
	for i, r := range reqs {
		f := exchange(t, fast, r, 0, 1)[0]
		n := exchange(t, std, r, 0, 1)[0]
		if f != n {
			t.Errorf("request %d (%.80q…): the own front answered\n%s\nnet/http answered\n%s", i, r, f, n)
		}
		if !strings.HasPrefix(f, "HTTP/1.1 ") || !strings.Contains(f, "X-Amz-Crc32: ") {
			t.Errorf("request %d: not an answer with DynamoDB's headers: %q", i, f)
		}
	}
	if h := fast.fast.handedOff.Load(); h != 0 {
		t.Errorf("%d of the SDK's connections were handed to net/http, want none", h)
	}
}

// TestY8_FrontServesPipelinedAndTrickledRequests: the same requests sent
// back to back on one connection in one write, and one byte per write,
// are answered in order as net/http answers them.
func TestY8_FrontServesPipelinedAndTrickledRequests(t *testing.T) {
	rec, _ := frontPair(t, Options{})
	reqs := sdkRequests(t, rec)
	all := bytes.Join(reqs, nil)
	for _, c := range []struct {
		name  string
		piece int
	}{{"pipelined", 0}, {"byte by byte", 1}, {"7 bytes a write", 7}} {
		t.Run(c.name, func(t *testing.T) {
			fast, std := frontPair(t, Options{})
			f := exchange(t, fast, all, c.piece, len(reqs))
			n := exchange(t, std, all, 0, len(reqs))
			for i := range f {
				if f[i] != n[i] {
					t.Errorf("answer %d: the own front answered\n%s\nnet/http answered\n%s", i, f[i], n[i])
				}
			}
			if h := fast.fast.handedOff.Load(); h != 0 {
				t.Errorf("handed %d connections to net/http, want none", h)
			}
		})
	}
}

// signedHead is a signed PutItem's head with Content-Length n and extra
// header lines.
func signedHead(t *testing.T, srv *Server, n int, extra ...string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.Endpoint(), nil)
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
	req.Header.Set("Content-Type", contentType)
	sign(req)
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: " + req.Host + "\r\n")
	for _, k := range []string{"X-Amz-Target", "Content-Type", "Authorization", "X-Amz-Date", "X-Amz-Content-Sha256"} {
		b.WriteString(k + ": " + req.Header.Get(k) + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(n) + "\r\n")
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// untilClosed sends raw, half-closes the connection when halfClose, and
// reads everything until the server closes it.
func untilClosed(t *testing.T, srv *Server, raw string, halfClose bool) string {
	t.Helper()
	conn := dial(t, srv)
	go func() {
		_, _ = io.WriteString(conn, raw)
		if halfClose {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
	}()
	b, err := io.ReadAll(conn)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading until the server closes: %v (read %q)", err, b)
	}
	return normalized(t, b)
}

// TestY8_FrontAnswersOddRequestsAsNetHTTP: a body shorter than its
// Content-Length, headers longer than the front's buffer, a body over the
// limit, and what the front hands to net/http (a chunked body, Expect:
// 100-continue, HTTP/1.0, CORS, GET, a query) are answered by both fronts
// alike; all but the first are handed over.
func TestY8_FrontAnswersOddRequestsAsNetHTTP(t *testing.T) {
	fast, std := frontPair(t, Options{})
	body := `{"TableName":"none","Item":{"pk":{"S":"a"}}}`
	cases := []struct {
		name    string
		raw     func(srv *Server) string
		handoff bool
		close   bool // the client half-closes after sending
	}{
		{"body shorter than Content-Length", func(srv *Server) string { return signedHead(t, srv, len(body)+10) + body }, false, true},
		{"Connection: close", func(srv *Server) string { return signedHead(t, srv, len(body), "Connection: close") + body }, false, false},
		{"headers over the buffer", func(srv *Server) string {
			return signedHead(t, srv, len(body), "X-Pad: "+strings.Repeat("p", 10<<10), "Connection: close") + body
		}, true, false},
		{"body over 16 MB", func(srv *Server) string { return signedHead(t, srv, maxBody+1) + body }, true, true},
		{"chunked", func(srv *Server) string {
			h := strings.Replace(signedHead(t, srv, 0, "Connection: close"), "Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n", 1)
			return h + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
		}, true, false},
		{"Expect: 100-continue", func(srv *Server) string {
			return signedHead(t, srv, len(body), "Expect: 100-continue", "Connection: close") + body
		}, true, false},
		{"HTTP/1.0", func(srv *Server) string {
			return strings.Replace(signedHead(t, srv, len(body)), "HTTP/1.1", "HTTP/1.0", 1) + body
		}, true, false},
		{"OPTIONS with Origin", func(srv *Server) string {
			return "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: http://a\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
		}, true, false},
		{"POST with Origin", func(srv *Server) string {
			return signedHead(t, srv, len(body), "Origin: http://a", "Connection: close") + body
		}, true, false},
		{"GET", func(srv *Server) string { return "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" }, true, false},
		{"a query", func(srv *Server) string {
			return strings.Replace(signedHead(t, srv, len(body), "Connection: close"), "POST / ", "POST /?X-Amz-Algorithm=x ", 1) + body
		}, true, false},
		{"no Host", func(srv *Server) string {
			h := signedHead(t, srv, len(body), "Connection: close")
			return regexp.MustCompile(`Host: [^\r]*\r\n`).ReplaceAllString(h, "") + body
		}, true, false},
		{"bare LF", func(srv *Server) string {
			return strings.ReplaceAll(signedHead(t, srv, len(body), "Connection: close"), "\r\n", "\n") + body
		}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fast.fast.handedOff.Load()
			f := untilClosed(t, fast, c.raw(fast), c.close)
			n := untilClosed(t, std, c.raw(std), c.close)
			if f != n {
				t.Errorf("the own front answered\n%q\nnet/http answered\n%q", f, n)
			}
			if !strings.HasPrefix(f, "HTTP/1.") {
				t.Errorf("no answer: %q", f)
			}
			if handed := fast.fast.handedOff.Load() - before; handed != map[bool]int64{true: 1}[c.handoff] {
				t.Errorf("handed %d connections to net/http, want handoff %v", handed, c.handoff)
			}
		})
	}
}

// dial opens a connection to srv for a test.
func dial(t *testing.T, srv *Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	return conn
}

// getItemRaw is a signed GetItem of table front's item pk=a.
func getItemRaw(t *testing.T, srv *Server) string {
	body := `{"TableName":"front","Key":{"pk":{"S":"a"}},"ConsistentRead":true}`
	return strings.Replace(signedHead(t, srv, len(body)), "DynamoDB_20120810.PutItem", "DynamoDB_20120810.GetItem", 1) + body
}

// TestY8_FrontShutdownClosesIdleAndAnswersBusyConnections: Close closes
// an idle keep-alive connection, answers the request in flight on another
// (with Connection: close, then closes it) and returns once it is
// answered.
func TestY8_FrontShutdownClosesIdleAndAnswersBusyConnections(t *testing.T) {
	fast, _ := frontPair(t, Options{})
	mkTable(t, client(fast, 1), "front", false)
	idle, busy := dial(t, fast), dial(t, fast)
	if _, err := io.WriteString(idle, getItemRaw(t, fast)); err != nil {
		t.Fatal(err)
	}
	idleR := bufio.NewReader(idle)
	if a, err := readRawAnswer(idleR); err != nil || !strings.HasPrefix(string(a), "HTTP/1.1 200 ") {
		t.Fatalf("first answer on the idle connection: %q, %v", a, err)
	}
	gets := fast.Stats()["GetItem"]
	fast.catMu.Lock() // the busy request stops at its table's lookup
	if _, err := io.WriteString(busy, getItemRaw(t, fast)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); fast.Stats()["GetItem"] == gets; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			fast.catMu.Unlock()
			t.Fatal("the busy request never reached its operation")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- fast.Close() }()
	for deadline := time.Now().Add(20 * time.Second); !fast.fast.closing.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			fast.catMu.Unlock()
			t.Fatal("Close never began")
		}
	}
	if b, err := io.ReadAll(idleR); err != nil || len(b) != 0 {
		fast.catMu.Unlock()
		t.Fatalf("the idle connection: read %q, %v; want it closed without a byte", b, err)
	}
	select {
	case err := <-closed:
		fast.catMu.Unlock()
		t.Fatalf("Close returned (%v) before the busy request was answered", err)
	default:
	}
	fast.catMu.Unlock()
	b, err := io.ReadAll(busy)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 200 OK\r\n") || !strings.Contains(string(b), "\r\nConnection: close\r\n") ||
		!strings.HasSuffix(string(b), "\r\n\r\n{}") {
		t.Fatalf("the busy request's answer: %q, %v; want its answer (no item), with Connection: close, then the connection closed", b, err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestY8_FrontCancelsARequestWhoseClientWentAway: a request waiting out
// an injected latency stops when its client closes the connection: its
// request memory is given back long before the latency would end.
func TestY8_FrontCancelsARequestWhoseClientWentAway(t *testing.T) {
	fast, _ := frontPair(t, Options{})
	mkTable(t, client(fast, 1), "front", false)
	fast.SetFaults(FaultConfig{Latency: 10 * time.Minute})
	conn := dial(t, fast)
	if _, err := io.WriteString(conn, getItemRaw(t, fast)); err != nil {
		t.Fatal(err)
	}
	h := &holdServer{Server: fast}
	h.waitState(t, "the request admitted", func(used int64, _ int) bool { return used > 0 })
	for deadline := time.Now().Add(20 * time.Second); fast.Stats()["GetItem"] == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached its operation")
		}
	}
	conn.Close()
	h.waitState(t, "nothing used", func(used int64, waiting int) bool { return used == 0 && waiting == 0 })
	if h := fast.fast.handedOff.Load(); h != 0 {
		t.Errorf("handed %d connections to net/http, want none", h)
	}
	fast.SetFaults(FaultConfig{})
}

// connPair is a server-side fastConn and the client's end of a loopback
// connection.
func connPair(t *testing.T) (*fastConn, net.Conn) {
	t.Helper()
	if !frontSupported {
		t.Skip("ddblocal's own front runs on Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	raw, err := srv.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return &fastConn{conn: srv, raw: raw}, cli
}

// eventually waits (20 s at most, a hung test) for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
	}
}

// TestY8_FrontContextSeesItsClientGo: a request's context is not done
// while its client is connected (sending more or not), is done once the
// client closes (asked with Err, or waited for with Done), leaves the
// client's next bytes unread, and is done once the request ends.
func TestY8_FrontContextSeesItsClientGo(t *testing.T) {
	t.Run("Err", func(t *testing.T) {
		fc, cli := connPair(t)
		ctx := &reqCtx{c: fc}
		if err := ctx.Err(); err != nil {
			t.Fatalf("Err with the client connected: %v", err)
		}
		cli.Close()
		eventually(t, "Err after the client closed", func() bool { return ctx.Err() == context.Canceled })
		ctx.end()
	})
	t.Run("Done", func(t *testing.T) {
		fc, cli := connPair(t)
		ctx := &reqCtx{c: fc}
		done := ctx.Done()
		select {
		case <-done:
			t.Fatal("Done with the client connected")
		default:
		}
		cli.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Done not closed within 20s of the client closing")
		}
		if ctx.Err() != context.Canceled {
			t.Fatalf("Err: %v", ctx.Err())
		}
		ctx.end()
	})
	t.Run("more bytes", func(t *testing.T) {
		fc, cli := connPair(t)
		ctx := &reqCtx{c: fc}
		done := ctx.Done()
		if _, err := io.WriteString(cli, "next"); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the background wait seeing the bytes", func() bool {
			select {
			case <-ctx.watchDone:
				return true
			default:
				return false
			}
		})
		select {
		case <-done:
			t.Fatal("Done after the client sent more")
		default:
		}
		ctx.end()
		if ctx.Err() != context.Canceled {
			t.Fatalf("Err once the request ended: %v", ctx.Err())
		}
		_ = fc.conn.SetReadDeadline(time.Now().Add(time.Minute))
		b := make([]byte, 4)
		if _, err := io.ReadFull(fc.conn, b); err != nil || string(b) != "next" {
			t.Fatalf("the client's next bytes: %q, %v", b, err)
		}
	})
	t.Run("end stops the wait", func(t *testing.T) {
		fc, cli := connPair(t)
		ctx := &reqCtx{c: fc}
		done := ctx.Done()
		ctx.end() // returns once the background wait stopped
		<-done
		_ = fc.conn.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := io.WriteString(cli, "later"); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 5)
		if _, err := io.ReadFull(fc.conn, b); err != nil || string(b) != "later" {
			t.Fatalf("the client's bytes after the request: %q, %v", b, err)
		}
	})
}

// TestY8_FrontTimesOutAsNetHTTP: with short timeouts, an idle connection
// is closed, a head that stops coming is closed without an answer and a
// body that stops coming gets net/http's answer, on both fronts alike.
func TestY8_FrontTimesOutAsNetHTTP(t *testing.T) {
	fast, std := frontPair(t, Options{IdleTimeout: 50 * time.Millisecond, ReadHeaderTimeout: 50 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	cases := []struct {
		name string
		raw  func(srv *Server) string
		want string
	}{
		{"idle", func(srv *Server) string { return getItemRaw(t, srv) }, "HTTP/1.1 400 "},
		{"head", func(*Server) string { return "POST / HTTP/1.1\r\nHost: x\r\n" }, ""},
		{"body", func(srv *Server) string { return signedHead(t, srv, 100) + "{}" }, "HTTP/1.1 200 OK\r\nDate: DATE\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := untilClosed(t, fast, c.raw(fast), false)
			n := untilClosed(t, std, c.raw(std), false)
			if f != n || !strings.HasPrefix(f, c.want) {
				t.Errorf("the own front answered\n%q\nnet/http answered\n%q\nwant %q", f, n, c.want)
			}
		})
	}
	if h := fast.fast.handedOff.Load(); h != 0 {
		t.Errorf("handed %d connections to net/http, want none", h)
	}
}

// TestY8_FrontHeadParsing: the heads the front serves itself, with the
// values it reads (header names in any case, the first of a repeated
// one), and those it leaves to net/http.
func TestY8_FrontHeadParsing(t *testing.T) {
	const base = "POST / HTTP/1.1\r\nhost: 127.0.0.1:8000\r\n"
	q, ok := parseHead([]byte(base + "x-amz-target: DynamoDB_20120810.GetItem\r\nCONTENT-TYPE:application/x-amz-json-1.0 \r\n" +
		"Authorization: AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host, Signature=ff\r\nX-Amz-Date: 20261203T000000Z\r\n" +
		"X-Amz-Target: second\r\nContent-Length: 0012\r\nConnection: Keep-Alive\r\n\r\n"))
	want := fastRequest{request: request{target: "DynamoDB_20120810.GetItem", contentType: "application/x-amz-json-1.0",
		auth: authHeaders{authorization: "AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host, Signature=ff", amzDate: "20261203T000000Z"}}, contentLength: 12}
	if !ok || q != want {
		t.Errorf("parseHead = %+v, %v; want %+v", q, ok, want)
	}
	if q, ok := parseHead([]byte(base + "Connection: close\r\n\r\n")); !ok || !q.close || q.contentLength != 0 {
		t.Errorf("Connection: close: %+v, %v", q, ok)
	}
	for _, head := range []string{
		base + "Content-Length: 1\r\nContent-Length: 1\r\n\r\n",
		base + "Content-Length: +5\r\n\r\n",
		base + "Content-Length: \r\n\r\n",
		base + "Content-Length: " + strconv.Itoa(maxBody+1) + "\r\n\r\n",
		base + "Content-Length: 99999999999999999999\r\n\r\n",
		base + "X-A: 1\r\n folded\r\n\r\n",
		base + "Connection: upgrade\r\n\r\n",
		base + "X-A: a\x01b\r\n\r\n",
		base + "Bad Name: x\r\n\r\n",
		base + "no colon\r\n\r\n",
		base + "Host: again\r\n\r\n",
		base + "te: trailers\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /%41 HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST * HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST http://x/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"post / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x y\r\n\r\n",
		"POST / HTTP/1.1 \r\nHost: x\r\n\r\n",
	} {
		if q, ok := parseHead([]byte(head)); ok {
			t.Errorf("parseHead(%q) = %+v, served; want it left to net/http", head, q)
		}
	}
}
