package plugin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

// wazeroEntries returns the files under dir that hold compiled code in
// wazero's format (they start with "WAZEVO").
func wazeroEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasPrefix(b, []byte("WAZEVO")) {
			out = append(out, path)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("compiled code under %s: %v (%v)", dir, out, err)
	}
	return out
}

// corruptCode overwrites the native code in a wazero cache entry with trap
// instructions (int3 on amd64, brk on arm64: the process would die of
// SIGTRAP if it ever ran them) and fixes up the entry's CRC32C, as anyone
// who can write the file can.
func corruptCode(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// WAZEVO, the version's length and text, the function count (u32),
	// each function's offset (u64), the code's length (u64), the code,
	// its CRC32C (u32).
	pos := 6
	pos += 1 + int(b[pos])
	pos += 4 + 8*int(binary.LittleEndian.Uint32(b[pos:]))
	n := int(binary.LittleEndian.Uint64(b[pos:]))
	pos += 8
	code := b[pos : pos+n]
	trap := []byte{0xcc}
	if runtime.GOARCH == "arm64" {
		trap = []byte{0x00, 0x00, 0x20, 0xd4}
	}
	for i := 0; i+len(trap) <= len(code); i += len(trap) {
		copy(code[i:], trap)
	}
	binary.LittleEndian.PutUint32(b[pos+n:], crc32.Checksum(code, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestW6_TamperedCompiledCodeIsRefused: compiled code in the cache whose
// native code was replaced, with its CRC32C fixed up, is refused before
// wazero loads it (a warning says so) and the module is compiled again; a
// writable cache then holds good code again, and a read-only one is not
// written. Each load runs in a child process: before, the child ran the
// replaced code and died of SIGTRAP.
func TestW6_TamperedCompiledCodeIsRefused(t *testing.T) {
	ctx := context.Background()
	wasm := orderSummaryWasm(t)
	path := filepath.Join(t.TempDir(), "order-summary.wasm")
	if err := os.WriteFile(path, wasm, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, readOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "writable", true: "read-only"}[readOnly], func(t *testing.T) {
			dir := precompiled(t, wasm)
			for _, e := range wazeroEntries(t, dir) {
				corruptCode(t, e)
			}
			before := wasmcachetest.Snapshot(t, dir)
			child := wasmcachetest.LoadInChild(t, path, dir, readOnly)
			t.Logf("child's log:\n%s", child.Log)
			if !strings.Contains(child.Log, "compiled code in the cache refused") || !strings.Contains(child.Log, "not what its manifest says") {
				t.Errorf("the child did not say it refused the changed code:\n%s", child.Log)
			}
			if readOnly {
				if after := wasmcachetest.Snapshot(t, dir); after != before {
					t.Errorf("the read-only cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				return
			}
			again := wasmcachetest.LoadInChild(t, path, dir, false)
			if strings.Contains(again.Log, "refused") {
				t.Errorf("the cache was not repaired:\n%s", again.Log)
			}
			if left := wazeroEntries(t, dir); len(left) != 1 {
				t.Errorf("the refused code stayed beside the new: %d files of compiled code, want 1: %v", len(left), left)
			}
			p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			if !plugin.CacheHit(p) {
				t.Error("the repaired cache did not serve the module")
			}
		})
	}
}

// instrumentedFile returns the file of the cache in dir that holds the
// instrumented form of the module whose SHA-256 is sum.
func instrumentedFile(t *testing.T, dir string, wasm []byte) string {
	t.Helper()
	sum := sha256.Sum256(wasm)
	m, err := filepath.Glob(filepath.Join(dir, "dynafold-instrumented-*"+hex.EncodeToString(sum[:])+"*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("instrumented module of sha256:%x in %s: %v (%v)", sum[:6], dir, m, err)
	}
	return m[0]
}

// TestW6_InstrumentedModuleIsBoundToItsInput: module B's cached
// instrumented form copied over the file named for module A's digest is
// refused (a warning says so) and A is instrumented again: loading A runs
// A, never B. Before, the host ran B while logging A's digest.
func TestW6_InstrumentedModuleIsBoundToItsInput(t *testing.T) {
	ctx := context.Background()
	a, b := testGuest(t, "good"), testGuest(t, "trap")
	for _, readOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "writable", true: "read-only"}[readOnly], func(t *testing.T) {
			dir := precompiled(t, a, b)
			bb, err := os.ReadFile(instrumentedFile(t, dir, b))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(instrumentedFile(t, dir, a), bb, 0o600); err != nil {
				t.Fatal(err)
			}
			logs := &syncbuf.Buffer{}
			p, err := plugin.Load(ctx, a, plugin.Config{CacheDir: dir, CacheReadOnly: readOnly, PoolSize: 1,
				Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Logf("A refused: %v", err)
			} else {
				defer p.Close(ctx)
				if got := p.Describe().Name; got != "good" {
					t.Fatalf("loading A ran %q, not A (good)", got)
				}
				mustServe(t, p)
			}
			if !strings.Contains(logs.String(), "instrumented module in the compilation cache refused") {
				t.Errorf("no warning about the swapped file:\n%s", logs)
			}
		})
	}
}
