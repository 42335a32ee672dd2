package ddblocal

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// The memory tests run ddblocal in a child process (this test binary,
// re-executed) with its default options, send it hostile bodies over HTTP
// and read the child's peak resident set (VmHWM) from /proc: the figure an
// operator sees, not the Go heap of a process shared with the test.
const memChildEnv = "DDBLOCAL_MEMORY_CHILD"

func TestHelperProcess_MemoryChild(t *testing.T) {
	if os.Getenv(memChildEnv) == "" {
		t.Skip("the child process of the memory tests (runs only with " + memChildEnv + " set)")
	}
	srv, err := Start(context.Background(), Options{
		TTLInterval: -1,
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		os.Exit(3)
	}
	fmt.Printf("ENDPOINT %s\n", srv.Endpoint())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// memChild is a ddblocal child process whose memory a test measures.
type memChild struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	stderr   *syncbuf.Buffer
	endpoint string
	exited   chan struct{}
}

func startMemChild(t *testing.T) *memChild {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/<pid>/status to read a process's resident set")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess_MemoryChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), memChildEnv+"=1")
	c := &memChild{cmd: cmd, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ep := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "ENDPOINT "); ok && !sent {
				ep <- e
				sent = true
			}
		}
		if !sent {
			ep <- ""
		}
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(c.kill)
	select {
	case c.endpoint = <-ep:
	case <-time.After(30 * time.Second):
		t.Fatalf("the ddblocal child did not start within 30s; stderr:\n%s", c.stderr.String())
	}
	if c.endpoint == "" {
		t.Fatalf("the ddblocal child exited before serving; stderr:\n%s", c.stderr.String())
	}
	return c
}

func (c *memChild) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	_ = c.stdin.Close()
}

// status returns a field of /proc/<pid>/status in bytes (VmHWM, VmRSS).
func (c *memChild) status(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, c.cmd.Process.Pid)
}

// memGuard watches a child's resident set and kills the child as soon as
// it passes a limit, so that a server that would take the machine's memory
// fails the test instead.
type memGuard struct {
	stopOnce sync.Once
	stopCh   chan struct{}
	done     chan struct{}
	fired    atomic.Bool
	seen     atomic.Int64
}

func (c *memChild) guard(limit int64) *memGuard {
	g := &memGuard{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-g.stopCh:
				return
			case <-c.exited:
				return
			case <-tick.C:
			}
			rss, err := c.status("VmRSS")
			if err != nil {
				continue
			}
			if rss > g.seen.Load() {
				g.seen.Store(rss)
			}
			if rss > limit {
				g.fired.Store(true)
				_ = c.cmd.Process.Signal(syscall.SIGKILL)
				return
			}
		}
	}()
	return g
}

// stop stops watching; it reports whether the guard killed the child and
// the largest resident set it saw.
func (g *memGuard) stop() (fired bool, rss int64) {
	g.stopOnce.Do(func() { close(g.stopCh) })
	<-g.done
	return g.fired.Load(), g.seen.Load()
}

// hugeListBody is a PutItem body of about 10*n bytes: an item whose list
// holds n numbers. Its item is far over DynamoDB's 400 KB, so the server
// must refuse it; what it costs to find out is what the tests measure.
func hugeListBody(table string, n int) []byte {
	var b bytes.Buffer
	b.Grow(10*n + 100)
	b.WriteString(`{"TableName":"` + table + `","Item":{"pk":{"S":"huge"},"l":{"L":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"N":"1"}`)
	}
	b.WriteString(`]}}}`)
	return b.Bytes()
}

// postRaw sends one DynamoDB request with an exact body and returns the
// status and the response body.
func postRaw(ctx context.Context, hc *http.Client, endpoint, op string, body io.Reader, n int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, body)
	if err != nil {
		return 0, nil, err
	}
	req.ContentLength = n
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(sign(req))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func memTable(t *testing.T, endpoint string) *dynamodb.Client {
	t.Helper()
	c, _ := verifyClients(endpoint)
	if _, err := c.CreateTable(ctxT(t), &dynamodb.CreateTableInput{
		TableName:            aws.String("mem"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if _, err := c.PutItem(ctxT(t), &dynamodb.PutItemInput{TableName: aws.String("mem"),
		Item: map[string]types.AttributeValue{"pk": s("small"), "v": n("1")}}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	return c
}

const mib = 1 << 20

func wantItemTooLarge(t *testing.T, status int, body []byte) {
	t.Helper()
	if status != 400 || !bytes.Contains(body, []byte("ValidationException")) || !bytes.Contains(body, []byte("Item size has exceeded the maximum allowed size")) {
		t.Fatalf("answer %d %s; want 400 ValidationException: Item size has exceeded the maximum allowed size", status, body)
	}
}

// TestW6_OneHugeListBodyCostsUnder300MB: one 15 MB PutItem holding a
// 1.5-million-element list is refused with DynamoDB's item-size error
// while the server's peak resident set stays under 300 MB.
func TestW6_OneHugeListBodyCostsUnder300MB(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 15 MB body to a child process")
	}
	const limit = 300 * mib
	c := startMemChild(t)
	memTable(t, c.endpoint)
	body := hugeListBody("mem", 1_500_000)
	g := c.guard(limit)
	status, resp, err := postRaw(ctxT(t), &http.Client{}, c.endpoint, "PutItem", bytes.NewReader(body), int64(len(body)))
	fired, _ := g.stop()
	hwm, herr := c.status("VmHWM")
	if fired {
		t.Fatalf("the server's resident set passed %d MiB on one %.1f MB body (killed)", limit/mib, float64(len(body))/1e6)
	}
	if err != nil || herr != nil {
		t.Fatalf("PutItem: %v; status: %v", err, herr)
	}
	wantItemTooLarge(t, status, resp)
	t.Logf("one %.1f MB body: peak RSS %d MiB", float64(len(body))/1e6, hwm/mib)
	if hwm > limit {
		t.Fatalf("peak RSS %d MiB on one %.1f MB body; want under %d MiB", hwm/mib, float64(len(body))/1e6, limit/mib)
	}
}

// TestW6_TwentyHugeListBodiesCostUnder1_5GBAndGetItemIsAnswered: twenty
// such bodies at once stay under 1.5 GB of resident set, each is answered,
// and a GetItem sent while they are all in flight is answered.
func TestW6_TwentyHugeListBodiesCostUnder1_5GBAndGetItemIsAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("sends twenty 15 MB bodies to a child process")
	}
	const (
		limit   = 1536 * mib
		clients = 20
	)
	c := startMemChild(t)
	db := memTable(t, c.endpoint)
	body := hugeListBody("mem", 1_500_000)
	g := c.guard(limit)
	defer g.stop()

	// Every body but its last byte goes out; the last waits for gate. The
	// GetItem below goes out once all twenty requests have sent their
	// headers and the server has read at least one body (all but its last
	// byte): then they are in flight together, read or waiting to be read.
	gate := make(chan struct{})
	type result struct {
		status int
		body   []byte
		err    error
	}
	results := make(chan result, clients)
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: clients}}
	var headers sync.WaitGroup
	headers.Add(clients)
	oneBodyRead := make(chan struct{})
	var once sync.Once
	for range clients {
		go func() {
			var wrote sync.Once
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteHeaders: func() { wrote.Do(headers.Done) }})
			r := io.MultiReader(bytes.NewReader(body[:len(body)-1]), &gatedReader{gate: gate, last: body[len(body)-1:], reached: func() { once.Do(func() { close(oneBodyRead) }) }})
			st, b, err := postRaw(ctx, hc, c.endpoint, "PutItem", r, int64(len(body)))
			wrote.Do(headers.Done)
			results <- result{st, b, err}
		}()
	}
	headers.Wait()
	<-oneBodyRead
	getItem := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("mem"), Key: map[string]types.AttributeValue{"pk": s("small")}, ConsistentRead: aws.Bool(true)})
		if err == nil && out.Item == nil {
			err = fmt.Errorf("the item is missing")
		}
		return err
	}
	if err := getItem(); err != nil {
		t.Fatalf("GetItem while twenty 15 MB bodies are in flight: %v", err)
	}
	close(gate)
	throttled := 0
	for range clients {
		r := <-results
		if g.fired.Load() {
			t.Fatalf("the server's resident set passed %d MiB on %d bodies at once (killed)", limit/mib, clients)
		}
		if r.err != nil {
			t.Fatalf("PutItem: %v", r.err)
		}
		if r.status == 400 && bytes.Contains(r.body, []byte("ThrottlingException")) {
			throttled++ // refused for memory; the SDK would retry it
			continue
		}
		wantItemTooLarge(t, r.status, r.body)
	}
	if throttled == clients {
		t.Fatalf("all %d bodies were refused for memory; none was served", clients)
	}
	if err := getItem(); err != nil {
		t.Fatalf("GetItem after the bodies: %v", err)
	}
	hwm, err := c.status("VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bodies of %.1f MB at once: peak RSS %d MiB (%d answered, %d refused with ThrottlingException)", clients, float64(len(body))/1e6, hwm/mib, clients-throttled, throttled)
	if hwm > limit {
		t.Fatalf("peak RSS %d MiB on %d bodies at once; want under %d MiB", hwm/mib, clients, limit/mib)
	}
}

// gatedReader calls reached when it is first read, then waits for gate
// before yielding last; once abort is closed it fails instead.
type gatedReader struct {
	gate    chan struct{}
	abort   <-chan struct{}
	last    []byte
	reached func()
	once    sync.Once
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.once.Do(g.reached)
	select {
	case <-g.gate:
	case <-g.abort:
		return 0, errors.New("the client gave up")
	}
	if len(g.last) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.last)
	g.last = g.last[n:]
	return n, nil
}
