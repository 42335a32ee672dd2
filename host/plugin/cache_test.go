package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/internal/syncbuf"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmcache"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

// TestW5_ReadOnlyPrecompiledCache precompiles order-summary into a
// directory and loads from it read-only, as a Lambda zip or a container
// image ships it: configured read-only (plugins.cacheReadOnly) on a
// directory that is in fact writable, and found read-only by the probe on
// a directory that is (a read-only bind mount for root, else 0555). The
// precompiled module compiles from the directory's wazero cache (a miss
// there would add a file, and the directory must not change); a module
// never precompiled still loads, in memory, with one warning naming
// `host plugin precompile`; nothing is written.
func TestW5_ReadOnlyPrecompiledCache(t *testing.T) {
	ctx := context.Background()
	wasm := orderSummaryWasm(t)
	for _, mode := range []string{"configured", "unwritable"} {
		t.Run(mode, func(t *testing.T) {
			dir := precompiled(t, wasm)
			view, how := dir, "plugins.cacheReadOnly on a writable directory"
			if mode == "unwritable" {
				view, how = wasmcachetest.MakeReadOnly(t, dir)
			}
			t.Logf("read-only by %s", how)
			before := wasmcachetest.Snapshot(t, dir)
			logs := &syncbuf.Buffer{}
			cfg := plugin.Config{CacheDir: view, CacheReadOnly: mode == "configured",
				Logger: slog.New(slog.NewTextHandler(logs, nil))}

			p, err := plugin.Load(ctx, wasm, cfg)
			if err != nil {
				t.Fatalf("load the precompiled module: %v", err)
			}
			defer p.Close(ctx)
			if got := plugin.CacheDirInUse(p); got != view {
				t.Errorf("precompiled module compiled with cache %q, want the read-only %q", got, view)
			}
			if _, err := p.Evolve(ctx, orderRun(3)); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(logs.String(), "precompile") {
				t.Errorf("a precompiled module logged a miss:\n%s", logs)
			}

			other := smallGuest(t) // never precompiled
			for i := range 2 {
				q, err := plugin.Load(ctx, other, cfg)
				if err != nil {
					t.Fatalf("load a module not in the read-only cache (%d): %v", i, err)
				}
				if got := plugin.CacheDirInUse(q); got != "" {
					t.Errorf("module not in the cache compiled with cache %q, want in memory", got)
				}
				mustServe(t, q)
				if err := q.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n := strings.Count(logs.String(), "host plugin precompile"); n != 1 {
				t.Errorf("%d warnings naming `host plugin precompile`, want 1:\n%s", n, logs)
			}
			if after := wasmcachetest.Snapshot(t, dir); after != before {
				t.Errorf("the read-only cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if err := plugin.Precompile(ctx, other, cfg); !errors.Is(err, plugin.ErrConfig) {
				t.Errorf("Precompile into the read-only cache: %v, want ErrConfig", err)
			}
		})
	}
}

// TestW5_ReadOnlyCacheStaleMarker: the directory's manifest says the
// module was precompiled but its compiled code is gone: the module
// compiles again in memory instead of failing, with the warning, and
// nothing is written.
func TestW5_ReadOnlyCacheStaleMarker(t *testing.T) {
	ctx := context.Background()
	wasm := orderSummaryWasm(t)
	dir := precompiled(t, wasm)
	entries, err := filepath.Glob(filepath.Join(wasmcache.EntriesDir(dir), "entry-*"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("compiled code in the cache: %v (%v), want 1 file", entries, err)
	}
	if err := os.Remove(entries[0]); err != nil {
		t.Fatal(err)
	}
	view, how := wasmcachetest.MakeReadOnly(t, dir)
	t.Logf("read-only by %s", how)
	logs := &syncbuf.Buffer{}
	p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: view, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("load with a stale marker: %v", err)
	}
	defer p.Close(ctx)
	mustFold(t, p)
	if strings.HasPrefix(how, "simulated") {
		return // the directory is writable after all: wazero added its entry
	}
	if got := plugin.CacheDirInUse(p); got != "" {
		t.Errorf("compiled with cache %q, want in memory", got)
	}
	if !strings.Contains(logs.String(), "host plugin precompile") {
		t.Errorf("no warning naming `host plugin precompile`:\n%s", logs)
	}
}

func mustFold(t *testing.T, p *plugin.Plugin) {
	t.Helper()
	if _, err := p.Evolve(context.Background(), orderRun(2)); err != nil {
		t.Fatal(err)
	}
}

// TestW6_CacheDirOthersCanWriteIsNotUsed: a cache directory writable by
// group or others is not used: the plugin loads and compiles in memory,
// a warning says how to fix the mode, nothing is written there, and
// Precompile refuses it with the same advice. Before, the directory was
// used without a word.
func TestW6_CacheDirOthersCanWriteIsNotUsed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	cfg := plugin.Config{CacheDir: dir, PoolSize: 1, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	p, err := plugin.Load(ctx, smallGuest(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	mustServe(t, p)
	if got := plugin.CacheDirInUse(p); got != "" {
		t.Errorf("compiled with cache %q, want in memory", got)
	}
	if !strings.Contains(logs.String(), "chmod 700 "+dir) {
		t.Errorf("no warning saying how to fix the mode:\n%s", logs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the refused directory was written: %v", entries)
	}
	err = plugin.Precompile(ctx, smallGuest(t), plugin.Config{CacheDir: dir})
	if !errors.Is(err, plugin.ErrConfig) || !strings.Contains(fmt.Sprint(err), "chmod 700 "+dir) {
		t.Errorf("Precompile into it: %v, want ErrConfig saying chmod 700 %s", err, dir)
	}
}

// TestW6_CacheWrittenWithAnotherKeyIsRefused: compiled code written with
// another key (here, precompiled with $DYNAFOLD_CACHE_KEY, which writes no
// key file, and loaded with another value) is refused with a warning and
// compiled again; with the same key it serves the load.
func TestW6_CacheWrittenWithAnotherKeyIsRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wasm := smallGuest(t)
	t.Setenv(wasmcache.KeyEnv, strings.Repeat("0f", 32))
	if err := plugin.Precompile(ctx, wasm, plugin.Config{CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, wasmcache.KeyFileName)); err == nil {
		t.Error("Precompile wrote a key file though the key came from the environment")
	}
	load := func() (*plugin.Plugin, string) {
		logs := &syncbuf.Buffer{}
		p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: dir, CacheReadOnly: true, PoolSize: 1,
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close(ctx) })
		mustServe(t, p)
		return p, logs.String()
	}
	if p, logs := load(); !plugin.CacheHit(p) || strings.Contains(logs, "refused") {
		t.Errorf("the same key: hit %v, log:\n%s", plugin.CacheHit(p), logs)
	}
	t.Setenv(wasmcache.KeyEnv, strings.Repeat("f0", 32))
	p, logs := load()
	if plugin.CacheHit(p) || !strings.Contains(logs, "not written with this cache's key ($"+wasmcache.KeyEnv+")") {
		t.Errorf("another key: hit %v, log:\n%s", plugin.CacheHit(p), logs)
	}
}

// TestW5_RelativeCacheDirServesTheNextLoad: a cache directory given
// relative to the working directory (the demo's ".cache/wazero") serves
// the next load from the code the first one kept.
func TestW5_RelativeCacheDirServesTheNextLoad(t *testing.T) {
	ctx := context.Background()
	wasm := smallGuest(t) // built from testdata, before leaving it
	t.Chdir(t.TempDir())
	for i, want := range []bool{false, true} {
		p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: filepath.Join(".cache", "wazero"), PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		mustServe(t, p)
		p.Close(ctx)
		if plugin.CacheHit(p) != want {
			t.Errorf("load %d: cache hit %v, want %v", i+1, plugin.CacheHit(p), want)
		}
	}
}
