package swap_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// BenchmarkDirSourceCheck measures one Check of a watched module that did
// not change, last changed more than two seconds before (the setup waits
// that long once, past the window in which file times are not trusted on
// any file system): what a Lambda host pays per invocation with
// hotSwap.watch, answered from the file's identity without reading it.
func BenchmarkDirSourceCheck(b *testing.B) {
	ctx := context.Background()
	wasm := module(b, v1)
	setup := func(b *testing.B) *swap.DirSource {
		path := filepath.Join(b.TempDir(), "p.wasm")
		if err := os.WriteFile(path, wasm, 0o644); err != nil {
			b.Fatal(err)
		}
		src, err := swap.NewDirSource(path, 5*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { src.Close() })
		return src
	}
	check := func(b *testing.B, src *swap.DirSource) {
		for b.Loop() {
			if c, err := src.Check(ctx); c != nil || err != nil {
				b.Fatalf("an unchanged file: candidate %v, err %v", c != nil, err)
			}
		}
	}
	src := setup(b)
	time.Sleep(2100 * time.Millisecond)
	if _, err := src.Check(ctx); err != nil {
		b.Fatal(err)
	}
	check(b, src)
}
