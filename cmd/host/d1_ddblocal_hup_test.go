//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/internal/dynamotest"
)

// host ddblocal --fault-file F reads its faults from F, and again on
// SIGHUP: an operator turns throttling on and off while ddblocal runs.
func TestD1_DdblocalFaultFileIsReadAgainOnSIGHUP(t *testing.T) {
	file := filepath.Join(t.TempDir(), "faults")
	if err := os.WriteFile(file, []byte("# throttle every write\nPutItem=ThrottlingException:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// the test's own channel: a SIGHUP sent before ddblocal listens for
	// it is dropped rather than ending the test binary
	hup := make(chan os.Signal, 8)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDDBLocal(ctx, []string{"--addr", addr, "--fault-file", file}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	c := dynamotest.ClientAt(t, "http://"+addr)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("ddblocal did not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	table := dynamotest.CreateTableWith(t, c, "hup", types.StreamViewTypeNewImage)
	if code := putOnce(t, c, table); code != "ThrottlingException" {
		t.Fatalf("PutItem with the fault file throttling it: code %q", code)
	}
	if err := os.WriteFile(file, []byte("# calm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); putOnce(t, c, table) != ""; {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("PutItem still fails after the fault file was emptied and SIGHUP sent")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
