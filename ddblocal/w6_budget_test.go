package ddblocal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// holdServer is a server whose requests marked with the X-Test-Hold
// header stop, holding their request memory, until release is closed.
type holdServer struct {
	*Server
	held    chan string // the marks of requests that reached the hold
	release chan struct{}
}

func startHoldServer(t *testing.T, opts Options) *holdServer {
	t.Helper()
	h := &holdServer{Server: startServer(t, opts), held: make(chan string, 16), release: make(chan struct{})}
	hook := func(stage string, r *http.Request) {
		if mark := r.Header.Get("X-Test-Hold"); mark != "" && stage == "admitted" {
			h.held <- mark
			<-h.release
		}
	}
	h.testHook.Store(&hook)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return h
}

// putBody is a PutItem body of about n bytes.
func putBody(table, pk string, n int) []byte {
	return []byte(`{"TableName":"` + table + `","Item":{"pk":{"S":"` + pk + `"},"v":{"S":"` + strings.Repeat("v", n) + `"}}}`)
}

type rawResult struct {
	status int
	body   []byte
	err    error
}

// sendHeld posts a body marked with mark in the background.
func (h *holdServer) send(ctx context.Context, op string, body []byte, mark string) chan rawResult {
	out := make(chan rawResult, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.Endpoint(), bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Content-Type", contentType)
		if mark != "" {
			req.Header.Set("X-Test-Hold", mark)
		}
		resp, err := http.DefaultClient.Do(sign(req))
		if err != nil {
			out <- rawResult{err: err}
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		out <- rawResult{resp.StatusCode, b.Bytes(), err}
	}()
	return out
}

// waitState polls the request memory until cond holds (or fails the test
// after 20s).
func (h *holdServer) waitState(t *testing.T, what string, cond func(used int64, waiting int) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		used, waiting := h.mem.state()
		if cond(used, waiting) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request memory never got to %s: %d bytes used, %d waiting", what, used, waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// memOpts gives 8 MiB of request memory: a body of 200 KB is charged
// 4.8 MB, so two of them do not fit together (7 MiB for large requests),
// while a GetItem is small.
func memOpts() Options {
	return Options{RequestMemory: 8 << 20, RequestMemoryWait: time.Minute}
}

func TestW6_LargeRequestWaitsWhileSmallOnesAreAnswered(t *testing.T) {
	h := startHoldServer(t, memOpts())
	c := client(h.Server, 1)
	mkTable(t, c, "mem", false)
	a := h.send(context.Background(), "PutItem", putBody("mem", "a", 200_000), "a")
	if got := <-h.held; got != "a" {
		t.Fatalf("held %s, want a", got)
	}
	b := h.send(context.Background(), "PutItem", putBody("mem", "b", 200_000), "")
	h.waitState(t, "one request waiting", func(_ int64, waiting int) bool { return waiting == 1 })
	// A GetItem is answered while a holds and b waits.
	if _, err := c.GetItem(ctxT(t), &dynamodb.GetItemInput{TableName: aws.String("mem"), Key: map[string]types.AttributeValue{"pk": s("a")}}); err != nil {
		t.Fatalf("GetItem while a large request waits: %v", err)
	}
	select {
	case r := <-b:
		t.Fatalf("b was answered (%d %s) while a held the memory it needs", r.status, r.body)
	default:
	}
	close(h.release)
	for name, ch := range map[string]chan rawResult{"a": a, "b": b} {
		if r := <-ch; r.err != nil || r.status != 200 {
			t.Fatalf("PutItem %s: %d %s %v", name, r.status, r.body, r.err)
		}
	}
	h.waitState(t, "nothing used", func(used int64, waiting int) bool { return used == 0 && waiting == 0 })
}

func TestW6_RequestWaitingTooLongIsThrottled(t *testing.T) {
	opts := memOpts()
	opts.RequestMemoryWait = 100 * time.Millisecond
	h := startHoldServer(t, opts)
	c := client(h.Server, 1)
	mkTable(t, c, "mem", false)
	a := h.send(context.Background(), "PutItem", putBody("mem", "a", 200_000), "a")
	<-h.held
	_, err := c.PutItem(ctxT(t), &dynamodb.PutItemInput{TableName: aws.String("mem"),
		Item: map[string]types.AttributeValue{"pk": s("b"), "v": s(strings.Repeat("v", 200_000))}})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ThrottlingException" || !strings.Contains(ae.ErrorMessage(), "RequestMemory") {
		t.Fatalf("PutItem while the memory is held: %v; want a ThrottlingException naming RequestMemory", err)
	}
	close(h.release)
	if r := <-a; r.status != 200 {
		t.Fatalf("PutItem a: %d %s %v", r.status, r.body, r.err)
	}
	out, err := c.GetItem(ctxT(t), &dynamodb.GetItemInput{TableName: aws.String("mem"), Key: map[string]types.AttributeValue{"pk": s("b")}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item != nil {
		t.Fatalf("the refused PutItem wrote its item: %v %v", out, err)
	}
}

// TestW6_ClientGoneWhileWaitingIsDroppedWhenItsTurnComes: a request whose
// client gives up mid-upload while it waits for request memory is dropped
// when its turn comes: it never reaches an operation, and its memory is
// given back. (A waiting request's body is not read, so the server learns
// that its client is gone when it reads it.)
func TestW6_ClientGoneWhileWaitingIsDroppedWhenItsTurnComes(t *testing.T) {
	h := startHoldServer(t, memOpts())
	c := client(h.Server, 1)
	mkTable(t, c, "mem", false)
	a := h.send(context.Background(), "PutItem", putBody("mem", "a", 200_000), "a")
	<-h.held
	ctx, cancel := context.WithCancel(context.Background())
	body := putBody("mem", "b", 200_000)
	gate := make(chan struct{}) // never opened: b's last byte never goes
	defer close(gate)
	b := make(chan error, 1)
	go func() {
		r := io.MultiReader(bytes.NewReader(body[:len(body)-1]), &gatedReader{gate: gate, abort: ctx.Done(), last: body[len(body)-1:], reached: func() {}})
		_, _, err := postRaw(ctx, &http.Client{}, h.Endpoint(), "PutItem", r, int64(len(body)))
		b <- err
	}()
	h.waitState(t, "b waiting", func(_ int64, waiting int) bool { return waiting == 1 })
	cancel()
	if err := <-b; err == nil {
		t.Fatal("b was answered after its client went away")
	}
	close(h.release)
	if r := <-a; r.status != 200 {
		t.Fatalf("PutItem a: %d %s %v", r.status, r.body, r.err)
	}
	h.waitState(t, "nothing used and nobody waiting", func(used int64, waiting int) bool { return used == 0 && waiting == 0 })
	if n := h.Stats()["PutItem"]; n != 1 {
		t.Fatalf("%d PutItem requests reached an operation; want 1 (a; b's client had gone)", n)
	}
	out, err := c.GetItem(ctxT(t), &dynamodb.GetItemInput{TableName: aws.String("mem"), Key: map[string]types.AttributeValue{"pk": s("b")}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item != nil {
		t.Fatalf("b, abandoned while it waited, wrote its item: %v %v", out, err)
	}
}

// TestW6_ClientGoneAfterItsBodyWasReadWritesNothing: a request whose
// client goes away once the server has its body stops there.
func TestW6_ClientGoneAfterItsBodyWasReadWritesNothing(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	mkTable(t, c, "mem", false)
	read := make(chan struct{})
	gone := make(chan error, 1)
	hook := func(stage string, r *http.Request) {
		if stage != "read" || r.Header.Get("X-Test-Hold") == "" {
			return
		}
		close(read)
		select {
		case <-r.Context().Done():
			gone <- nil
		case <-time.After(20 * time.Second):
			gone <- errors.New("the request's context was not cancelled within 20s of its client going away")
		}
	}
	srv.testHook.Store(&hook)
	ctx, cancel := context.WithCancel(context.Background())
	h := &holdServer{Server: srv}
	res := h.send(ctx, "PutItem", putBody("mem", "gone", 100), "x")
	<-read
	cancel()
	if err := <-gone; err != nil {
		t.Fatal(err)
	}
	<-res
	// The abandoned request's handler has returned once its request
	// memory is given back.
	h.waitState(t, "nothing used", func(used int64, waiting int) bool { return used == 0 && waiting == 0 })
	out, err := c.GetItem(ctxT(t), &dynamodb.GetItemInput{TableName: aws.String("mem"), Key: map[string]types.AttributeValue{"pk": s("gone")}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item != nil {
		t.Fatalf("a PutItem whose client went away wrote its item: %v %v", out, err)
	}
}

// TestW6_RequestMemoryLetsSmallOnesPastAndLargeOnesInOrder: the semaphore
// itself. Large requests never take the last eighth and are admitted in
// arrival order (one that would fit waits behind an earlier one that does
// not); small ones pass whenever they fit.
func TestW6_RequestMemoryLetsSmallOnesPastAndLargeOnesInOrder(t *testing.T) {
	b := newMemBudget(1000) // reserve 125
	ctx := context.Background()
	if err := b.acquire(ctx, 600, time.Minute); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 4)
	wait := func(n int64) {
		go func() {
			if err := b.acquire(ctx, n, time.Minute); err != nil {
				t.Errorf("acquire %d: %v", n, err)
			}
			got <- n
		}()
	}
	waiting := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, w := b.state(); w == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never %d waiting", n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait(300) // 600+300 > 1000-125: waits
	waiting(1)
	wait(200) // would fit (600+200 <= 875) but arrives after 300: waits
	waiting(2)
	if err := b.acquire(ctx, 100, 0); err != nil { // small: fits in what is left
		t.Fatalf("a small request waited behind large ones: %v", err)
	}
	if err := b.acquire(ctx, 126, -1); !errors.Is(err, errRequestMemory) {
		t.Fatalf("a large request jumped the queue: %v", err)
	}
	if _, w := b.state(); w != 2 {
		t.Fatalf("%d waiting; want the 300 and, behind it, the 200 that would fit", w)
	}
	b.release(600)
	<-got
	<-got
	if used, w := b.state(); used != 600 || w != 0 {
		t.Fatalf("used %d, %d waiting; want 600 (100+300+200), 0", used, w)
	}
}
