package extism_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/internal/syncbuf"

	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/wasmcache"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

// TestW5_ReadOnlyPrecompiledCache is host/plugin's test of the same name on
// the Extism transport: the AssemblyScript order-summary precompiled, then
// loaded from the directory configured read-only and found read-only; a
// plugin never precompiled loads in memory with one warning; the directory
// does not change (a miss of the kernel or the plugin would add a file).
func TestW5_ReadOnlyPrecompiledCache(t *testing.T) {
	ctx := context.Background()
	wasm := orderSummaryAS(t)
	// The same plugin with a custom section: another module to the caches.
	other := append([]byte{}, wasm...)
	other = append(other, 0, 7, 5, 'o', 't', 'h', 'e', 'r', 1)
	for _, mode := range []string{"configured", "unwritable"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			if err := extism.Precompile(ctx, wasm, extism.Config{CacheDir: dir}); err != nil {
				t.Fatal(err)
			}
			view, how := dir, "plugins.cacheReadOnly on a writable directory"
			if mode == "unwritable" {
				view, how = wasmcachetest.MakeReadOnly(t, dir)
			}
			t.Logf("read-only by %s", how)
			before := wasmcachetest.Snapshot(t, dir)
			logs := &syncbuf.Buffer{}
			cfg := extism.Config{CacheDir: view, CacheReadOnly: mode == "configured",
				Logger: slog.New(slog.NewTextHandler(logs, nil))}
			p := load(t, wasm, cfg)
			if got := p.CacheDirInUse(); got != view {
				t.Errorf("precompiled plugin compiled with cache %q, want the read-only %q", got, view)
			}
			if _, err := p.Evolve(ctx, orderRun(3)); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(logs.String(), "precompile") {
				t.Errorf("a precompiled plugin logged a miss:\n%s", logs)
			}
			for range 2 {
				q := load(t, other, cfg)
				if got := q.CacheDirInUse(); got != "" {
					t.Errorf("plugin not in the cache compiled with cache %q, want in memory", got)
				}
			}
			if n := strings.Count(logs.String(), "host plugin precompile"); n != 1 {
				t.Errorf("%d warnings naming `host plugin precompile`, want 1:\n%s", n, logs)
			}
			if after := wasmcachetest.Snapshot(t, dir); after != before {
				t.Errorf("the read-only cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if err := extism.Precompile(ctx, other, cfg); !errors.Is(err, extism.ErrConfig) {
				t.Errorf("Precompile into the read-only cache: %v, want ErrConfig", err)
			}
		})
	}
}

// TestW6_ExtismTamperedCompiledCodeIsRefused: compiled code of an Extism
// plugin (its module and the Extism kernel) changed in the cache is refused
// with a warning, compiled again and kept anew; the next load is a hit.
func TestW6_ExtismTamperedCompiledCodeIsRefused(t *testing.T) {
	ctx := context.Background()
	wasm := orderSummaryAS(t)
	dir := t.TempDir()
	if err := extism.Precompile(ctx, wasm, extism.Config{CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	entries, err := filepath.Glob(filepath.Join(wasmcache.EntriesDir(dir), "entry-*"))
	if err != nil || len(entries) != 2 {
		t.Fatalf("compiled code in the cache: %v (%v), want the module's and the kernel's", entries, err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(e, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{false, true} {
		logs := &syncbuf.Buffer{}
		p, err := extism.Load(ctx, wasm, extism.Config{CacheDir: dir, PoolSize: 1, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Evolve(ctx, orderRun(2)); err != nil {
			t.Fatal(err)
		}
		p.Close(ctx)
		if refused := strings.Contains(logs.String(), "compiled code in the cache refused"); refused == want || p.CacheHit() != want {
			t.Errorf("load %d: refused %v, hit %v; want refused %v, hit %v:\n%s", i+1, refused, p.CacheHit(), !want, want, logs)
		}
	}
}
