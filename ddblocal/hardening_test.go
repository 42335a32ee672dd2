package ddblocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// goodDataFile returns the bytes of a data file holding a table with a
// stream and 300 items.
func goodDataFile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := client(srv, 1)
	mkTable(t, c, "hard", false, func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	})
	for i := range 300 {
		if _, err := c.PutItem(ctxT(t), &dynamodb.PutItemInput{TableName: aws.String("hard"),
			Item: map[string]types.AttributeValue{"pk": s(fmt.Sprint(i)), "v": s(strings.Repeat("v", 200))}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, dataFileName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// usedSize is the size a data file's newest meta page says it uses (bbolt
// grows the file ahead of its use).
func usedSize(t *testing.T, file []byte) int {
	m0, ok0 := parseBoltMeta(file[boltPageHeader:])
	m1, ok1 := parseBoltMeta(file[int(m0.pageSize)+boltPageHeader:])
	if !ok0 || !ok1 {
		t.Fatal("the good data file has an invalid meta page")
	}
	if m1.txid > m0.txid {
		m0 = m1
	}
	return int(m0.pgid) * int(m0.pageSize)
}

func TestHardening_DamagedDataFileFailsAtStartNamingIt(t *testing.T) {
	good := goodDataFile(t)
	page := 4096
	rng := rand.New(rand.NewPCG(7, 7))
	garbage := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	cases := []struct {
		name string
		file func() []byte
		want string
	}{
		{"empty", func() []byte { return []byte{} }, "is empty"},
		{"short", func() []byte { return good[:100] }, "truncated"},
		{"shorter than a meta page", func() []byte { return good[:50] }, "too short"},
		{"truncated to half", func() []byte { return good[:len(good)/2] }, "is truncated"},
		{"last used page cut", func() []byte { return good[:usedSize(t, good)-page] }, "is truncated"},
		{"meta pages overwritten", func() []byte {
			b := bytes.Clone(good)
			copy(b, garbage(2*page))
			return b
		}, "no valid bbolt meta page"},
		{"data pages overwritten", func() []byte {
			b := bytes.Clone(good)
			copy(b[2*page:], garbage(len(b)-2*page))
			return b
		}, ""},
		{"every data page's middle scribbled", func() []byte {
			b := bytes.Clone(good)
			for off := 2 * page; off+page <= len(b); off += page {
				copy(b[off+100:], garbage(64))
			}
			return b
		}, ""},
		{"not a bbolt file", func() []byte { return []byte(strings.Repeat("hello, world\n", 2000)) }, "no valid bbolt meta page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, dataFileName)
			if err := os.WriteFile(path, tc.file(), 0o600); err != nil {
				t.Fatal(err)
			}
			srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1, Logger: slog.New(slog.DiscardHandler)})
			if err == nil {
				_ = srv.Close()
				t.Fatalf("Start on a damaged data file (%s) succeeded", tc.name)
			}
			t.Logf("Start: %v", err)
			if !errors.Is(err, ErrDataFileDamaged) {
				t.Errorf("error does not wrap ErrDataFileDamaged: %v", err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file %s: %v", path, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say %q: %v", tc.want, err)
			}
		})
	}
	// The intact file still opens, with its items.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, dataFileName), good, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Options{DataDir: dir})
	out, err := client(srv, 1).Scan(ctxT(t), &dynamodb.ScanInput{TableName: aws.String("hard"), Select: types.SelectCount})
	if err != nil || out.Count != 300 {
		t.Fatalf("the intact copy: Scan count %d, err %v; want 300 items", out.Count, err)
	}
}

func TestHardening_NewDataDirStartsEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	srv := startServer(t, Options{DataDir: dir})
	out, err := client(srv, 1).ListTables(ctxT(t), &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 0 {
		t.Fatalf("a new data dir: tables %v, err %v; want none", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, dataFileName+".new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file of a new store is left behind: %v", err)
	}
}

func TestHardening_SecondServerOnSameDataDirFailsQuickly(t *testing.T) {
	dir := t.TempDir()
	startServer(t, Options{DataDir: dir})
	start := time.Now()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	took := time.Since(start)
	if err == nil {
		_ = srv.Close()
		t.Fatal("a second server on the same data dir started")
	}
	if !errors.Is(err, ErrDataFileLocked) {
		t.Errorf("error does not wrap ErrDataFileLocked: %v", err)
	}
	path := filepath.Join(dir, dataFileName)
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("error does not name %s and say another process holds it: %v", path, err)
	}
	// About storeLockTimeout; the bound is far above it, so that a loaded
	// machine does not fail the test, and far below a wait for the lock
	// that would last as long as the first server.
	if took > storeLockTimeout+30*time.Second {
		t.Errorf("the second server took %v to fail, want about %v", took, storeLockTimeout)
	}
}

// rawCall posts a hand-written request body: the SDK cannot send invalid
// UTF-8 (its JSON encoder, like Go's, writes U+FFFD instead).
func rawCall(t *testing.T, srv *Server, op, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, srv.Endpoint(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Amz-Target", op)
	resp, err := http.DefaultClient.Do(sign(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHardening_InvalidUTF8IsRefused(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	mkTable(t, c, "utf", false)
	put := func(pk, attrName, val string) string {
		return `{"TableName":"utf","Item":{"pk":{"S":"` + pk + `"},"` + attrName + `":` + val + `}}`
	}
	bad := []struct{ name, body string }{
		{"key with an invalid byte", put("a\xffb", "v", `{"S":"x"}`)},
		{"key with a lone high surrogate", put(`a\ud800b`, "v", `{"S":"x"}`)},
		{"key with a lone low surrogate", put(`a\uDC00b`, "v", `{"S":"x"}`)},
		{"key with a high surrogate before a non-surrogate", put(`a\ud800\u0041`, "v", `{"S":"x"}`)},
		{"S value with an invalid byte", put("k", "v", "{\"S\":\"x\xc3\"}")},
		{"S value with a truncated sequence", put("k", "v", "{\"S\":\"\xe2\x82\"}")},
		{"SS member with a lone surrogate", put("k", "v", `{"SS":["ok","\udfff"]}`)},
		{"attribute name with an invalid byte", put("k", "v\xfe", `{"S":"x"}`)},
		{"attribute name with a lone surrogate", put("k", `v\uD834`, `{"S":"x"}`)},
		{"nested map value", put("k", "m", "{\"M\":{\"in\":{\"S\":\"\xc0\xaf\"}}}")},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, resp := rawCall(t, srv, dynamoPrefix+"PutItem", tc.body)
			if code != 400 || !strings.Contains(resp, "ValidationException") || !strings.Contains(resp, "UTF-8") {
				t.Fatalf("PutItem %s: status %d %s; want 400 ValidationException naming UTF-8", tc.name, code, resp)
			}
		})
	}
	// Nothing was stored; in particular no item under the U+FFFD aliases.
	out, err := c.Scan(ctxT(t), &dynamodb.ScanInput{TableName: aws.String("utf")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 0 {
		t.Errorf("refused writes stored %d items: %v", out.Count, out.Items)
	}
	// Valid escapes, surrogate pairs and multi-byte UTF-8 are fine.
	for _, body := range []string{
		put(`pair\ud83d\ude00`, "v", `{"S":"x"}`),
		put("caf\u00e9 \U0001F600", "v", `{"S":"\\\\ud800 is text here, not an escape"}`),
		put(`tab\tquote\"`, "v", `{"SS":["\u00e9","b"]}`),
	} {
		if code, resp := rawCall(t, srv, dynamoPrefix+"PutItem", body); code != 200 {
			t.Errorf("PutItem of valid UTF-8 %s: status %d %s", body, code, resp)
		}
	}
	got, err := c.GetItem(ctxT(t), &dynamodb.GetItemInput{TableName: aws.String("utf"), Key: map[string]types.AttributeValue{"pk": s("pair\U0001F600")}, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		t.Errorf("the item keyed by a surrogate pair escape is not found by its UTF-8 key: %v %v", got, err)
	}
}

func TestHardening_NonLoopbackAddrNeedsExplicitOption(t *testing.T) {
	srv, err := Start(context.Background(), Options{Addr: "0.0.0.0:0", TTLInterval: -1})
	if err == nil {
		_ = srv.Close()
		t.Fatal("Start listened on 0.0.0.0 without AllowNonLoopback")
	}
	if !errors.Is(err, ErrNonLoopback) || !strings.Contains(err.Error(), "AllowNonLoopback") {
		t.Errorf("error does not wrap ErrNonLoopback and name the option: %v", err)
	}
	var logs bytes.Buffer
	srv = startServer(t, Options{Addr: "0.0.0.0:0", AllowNonLoopback: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "non-loopback") {
		t.Errorf("no warning logged for a non-loopback address; logs:\n%s", logs.String())
	}
	if _, err := client(srv, 1).ListTables(ctxT(t), &dynamodb.ListTablesInput{}); err != nil {
		t.Errorf("ListTables on %s: %v", srv.Endpoint(), err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		startServer(t, Options{Addr: addr, Logger: slog.New(slog.DiscardHandler)})
	}
}

func TestHardening_HalfSentRequestIsDisconnected(t *testing.T) {
	srv := startServer(t, Options{ReadTimeout: 300 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	addr := strings.TrimPrefix(srv.Endpoint(), "http://")
	for _, tc := range []struct {
		name, sent string
		limit      time.Duration
	}{
		{"half a body", "POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 1000\r\n\r\n{\"Limit\":", 300 * time.Millisecond},
		{"half the headers", "POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Tar", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			if _, err := io.WriteString(conn, tc.sent); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
			_, err = io.Copy(io.Discard, conn) // whatever the server answers, until it closes
			took := time.Since(start)
			if err != nil {
				t.Fatalf("the server kept the connection (%v after %v)", err, took)
			}
			// Not before the timeout; after it, as late as a loaded machine
			// runs the server's timer (the client's deadline is a minute).
			if took < tc.limit/2 || took > tc.limit+30*time.Second {
				t.Errorf("disconnected after %v, want about %v", took, tc.limit)
			}
		})
	}
	// A whole request is still served.
	if _, err := client(srv, 1).ListTables(ctxT(t), &dynamodb.ListTablesInput{}); err != nil {
		t.Errorf("ListTables: %v", err)
	}
}
