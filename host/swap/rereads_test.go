package swap_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/swap"
)

// TestH3_FixtureIsReadAgainForEachCandidate: a fixture updated on disk
// tests the next candidate without a restart. 1.0.0 passes the fixture it
// started with; once the rows file expects 2.0.0's rows, rolling back to
// 1.0.0 (the pipeline again) is refused by the updated fixture.
func TestH3_FixtureIsReadAgainForEachCandidate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(filepath.Join("testdata", "fixture", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("events.json", "events.json")
	copyFile("rows-v1.json", "rows.json")
	cfg := swap.Config{Plugin: pluginConfig()}
	sc := &swap.SourceConfig{Fixture: &swap.FixtureFiles{Events: "events.json", Rows: "rows.json"}}
	if err := sc.Apply(&cfg, dir); err != nil {
		t.Fatal(err)
	}
	s := newSwapper(t, v1, cfg) // passes rows-v1
	if _, _, err := s.Offer(ctx, candidate(t, v2)); err != nil {
		t.Fatal(err) // v2 has a self_test, which it passes
	}
	copyFile("rows-v2.json", "rows.json")
	_, err := s.Rollback(ctx)
	if !errors.Is(err, swap.ErrSmokeTest) || !strings.Contains(err.Error(), `model missing, want {"N":"2"}`) {
		t.Fatalf("rollback to 1.0.0 under the updated fixture: %v; want it refused by the new rows", err)
	}
	if s.Current().Version != "2.0.0" {
		t.Errorf("serving %s after the refused rollback, want 2.0.0", s.Current().Version)
	}
}

// TestH3_ArchiveKeepsOneCopyPerModule: a module accepted again is renamed
// to its latest acceptance, not copied, and the rollback still finds the
// previous module.
func TestH3_ArchiveKeepsOneCopyPerModule(t *testing.T) {
	ctx := context.Background()
	archive := t.TempDir()
	s := newSwapper(t, v1, swap.Config{Archive: archive})
	for _, m := range []string{v2, v1, v2} {
		if _, _, err := s.Offer(ctx, candidate(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	files, err := filepath.Glob(filepath.Join(archive, "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("archive holds %d files, want one per module (2): %v", len(files), files)
	}
	newest, _ := os.ReadFile(files[1]) // names sort by acceptance time
	if string(newest) != string(module(t, v2)) {
		t.Errorf("the newest archived module is not the last accepted (2.0.0)")
	}
	path := filepath.Join(t.TempDir(), "orders.wasm")
	if err := os.WriteFile(path, module(t, v2), 0o644); err != nil {
		t.Fatal(err)
	}
	used, err := swap.RollbackDir(archive, path)
	if err != nil || used != files[0] {
		t.Errorf("RollbackDir = %s, %v; want %s", used, err, files[0])
	}
}
