package ddblocal

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func TestServer_ServeStopsOnCancel(t *testing.T) {
	// Serve does not report its address, so pick a free port; another
	// process may take it first, so try a few.
	for attempt := 0; attempt < 5; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Serve(ctx, Options{Addr: addr, TTLInterval: -1}) }()
		up := false
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !up; {
			select {
			case err := <-done:
				cancel()
				t.Logf("Serve on %s: %v; retrying", addr, err)
				deadline = time.Time{}
				continue
			default:
			}
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				up = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !up {
			cancel()
			continue
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve returned %v after cancel", err)
			}
			return
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after cancel")
		}
	}
	t.Fatal("Serve never came up")
}

func TestServer_CloseTwiceAndRefuse(t *testing.T) {
	srv, err := Start(context.Background(), Options{TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := client(srv, 1)
	if _, err := c.ListTables(ctxT(t), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.ListTables(ctxT(t), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("a closed server answered")
	}
}
