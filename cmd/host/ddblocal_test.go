package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
)

func TestDdblocal_NonLoopbackAddrNeedsTheFlag(t *testing.T) {
	err := runDDBLocal(context.Background(), []string{"--addr", "0.0.0.0:0"})
	if !errors.Is(err, ddblocal.ErrNonLoopback) || !strings.Contains(err.Error(), "--allow-non-loopback") {
		t.Fatalf("host ddblocal --addr 0.0.0.0:0: err %v; want a refusal naming --allow-non-loopback", err)
	}

	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := runDDBLocal(ctx, []string{"--addr", "0.0.0.0:0", "--allow-non-loopback"}); err != nil {
		t.Fatalf("host ddblocal --addr 0.0.0.0:0 --allow-non-loopback: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "non-loopback") {
		t.Errorf("no warning logged for a non-loopback address; logs:\n%s", logs.String())
	}
}

func TestDdblocal_SecondOnTheSameDataDirFails(t *testing.T) {
	dir := t.TempDir()
	first, err := ddblocal.Start(context.Background(), ddblocal.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = runDDBLocal(ctx, []string{"--addr", "127.0.0.1:0", "--data", dir})
	if !errors.Is(err, ddblocal.ErrDataFileLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a second host ddblocal on %s: err %v; want ErrDataFileLocked naming the file", dir, err)
	}
}

func TestW6_DDBLocalCommandSetsTheRequestMemory(t *testing.T) {
	opts, err := ddblocalOptions([]string{"--request-memory-mib", "64", "--request-memory-wait", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.RequestMemory != 64<<20 || opts.RequestMemoryWait != 2*time.Second {
		t.Fatalf("--request-memory-mib 64 --request-memory-wait 2s: RequestMemory %d, RequestMemoryWait %v", opts.RequestMemory, opts.RequestMemoryWait)
	}
	opts, err = ddblocalOptions([]string{"--request-memory-mib", "-1", "--request-memory-wait", "0s"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.RequestMemory >= 0 || opts.RequestMemoryWait >= 0 {
		t.Fatalf("--request-memory-mib -1 --request-memory-wait 0s: RequestMemory %d, RequestMemoryWait %v; want no limit and no wait", opts.RequestMemory, opts.RequestMemoryWait)
	}
	if opts, _ := ddblocalOptions(nil); opts.RequestMemory != 512<<20 {
		t.Fatalf("default RequestMemory %d, want 512 MiB", opts.RequestMemory)
	}
}
