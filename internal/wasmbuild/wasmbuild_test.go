package wasmbuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestBuildCachesBySource(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir())
	src := t.TempDir()
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module guest\n\ngo 1.24\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package main\n\nfunc main() {}\n\n//go:wasmexport answer\nfunc answer() int32 { return 42 }\n")
	ctx := context.Background()
	first, err := BuildFile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(first)
	if err != nil || !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Fatalf("not a Wasm module: %v", err)
	}
	start := time.Now()
	again, err := BuildFile(ctx, src)
	if err != nil || again != first {
		t.Fatalf("second build: %q, %v; want the cached %q", again, err, first)
	}
	t.Logf("cached lookup took %s", time.Since(start))

	write("package main\n\nfunc main() {}\n\n//go:wasmexport answer\nfunc answer() int32 { return 43 }\n")
	changed, err := BuildFile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if changed == first {
		t.Error("a changed source reused the old build")
	}
}

func TestBuildReportsCompileErrors(t *testing.T) {
	t.Setenv(CacheDirEnv, t.TempDir())
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module guest\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644)
	if _, err := BuildFile(context.Background(), src); err == nil || !bytes.Contains([]byte(err.Error()), []byte("undefined")) {
		t.Errorf("error %v, want the compiler's message", err)
	}
}
