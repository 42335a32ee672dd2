package plugin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
)

func TestW1_RefusesUnknownABIMajor(t *testing.T) {
	_, err := plugin.Load(context.Background(), testGuest(t, "abi2"), plugin.Config{Name: "abi2", CacheDir: cacheDir})
	if !errors.Is(err, plugin.ErrABIVersion) {
		t.Fatalf("error %v does not match ErrABIVersion", err)
	}
	var ve *plugin.ABIVersionError
	if !errors.As(err, &ve) || ve.Major != 2 || ve.Minor != 0 {
		t.Fatalf("error %#v is not an *ABIVersionError for 2.0", err)
	}
	want := "plugin abi2: ABI version 2.0 is not supported by this host (ABI 1.x); rebuild the plugin with a 1.x SDK"
	if err.Error() != want {
		t.Errorf("error text\n got %q\nwant %q", err.Error(), want)
	}
}

func TestW1_RefusesModuleWithoutTheConvention(t *testing.T) {
	empty := []byte("\x00asm\x01\x00\x00\x00")
	_, err := plugin.Load(context.Background(), empty, plugin.Config{Name: "empty"})
	if !errors.Is(err, plugin.ErrInvalidModule) {
		t.Fatalf("error %v does not match ErrInvalidModule", err)
	}
	var le *plugin.LoadError
	if !errors.As(err, &le) || le.Plugin != "empty" {
		t.Fatalf("error %#v is not a *LoadError naming the plugin", err)
	}
}

func TestW1_LoadDescribes(t *testing.T) {
	p := loadGuest(t, "good", plugin.Config{})
	d := p.Describe()
	if d.Name != "good" || d.ABIMajor != abi.VersionMajor || !d.Has(abi.CapEvolve) {
		t.Errorf("description %+v", d)
	}
	if p.Name() != "good@0.0.1" {
		t.Errorf("Name() = %q", p.Name())
	}
	resp, err := p.Key(context.Background(), &abi.KeyRequest{Source: "Order", Events: []abi.Event{{Stream: "Order", StreamID: "o-7", Version: 1, Type: "Placed"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Keys) != 1 || resp.Keys[0].Key["pk"].Str != "o-7" {
		t.Errorf("keys %+v", resp.Keys)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Evolve(context.Background(), evolveReq("Placed")); !errors.Is(err, plugin.ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

func TestW5_PrecompileFillsTheCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wasm := testGuest(t, "good")
	if err := plugin.Precompile(ctx, wasm, plugin.Config{CacheDir: dir}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("cache dir after Precompile: %v, %v", entries, err)
	}
	p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	mustServe(t, p)
	if err := plugin.Precompile(ctx, wasm, plugin.Config{}); !errors.Is(err, plugin.ErrConfig) {
		t.Errorf("Precompile without CacheDir: %v, want ErrConfig", err)
	}
}

func TestW1_LoadFileNamesThePlugin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.wasm")
	if err := os.WriteFile(path, testGuest(t, "abi2"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := plugin.LoadFile(context.Background(), path, plugin.Config{CacheDir: cacheDir})
	if !errors.Is(err, plugin.ErrABIVersion) || !strings.HasPrefix(err.Error(), "plugin mine: ") {
		t.Errorf("error %v, want an ABI version error naming plugin mine", err)
	}
	if _, err := plugin.LoadFile(context.Background(), filepath.Join(t.TempDir(), "absent.wasm"), plugin.Config{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
