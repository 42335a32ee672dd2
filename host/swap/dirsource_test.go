package swap_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host/swap"
)

// dirSource watches dir/name; it is closed at the end of the test.
func dirSource(t *testing.T, path string) *swap.DirSource {
	t.Helper()
	src, err := swap.NewDirSource(path, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestW6_DirSourceRefusesASymlinkOutOfTheDirectory: a module file that is
// a symlink to a file outside the watched directory is refused, unread,
// with the reason in the log and in the Swapper's events; the version
// serving keeps serving, and the refusal is reported once, not at every
// check. A symlink that stays in the directory (as a Kubernetes volume's
// ..data link) is followed.
func TestW6_DirSourceRefusesASymlinkOutOfTheDirectory(t *testing.T) {
	ctx := context.Background()
	dir, outside := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "orders.wasm")
	if err := os.WriteFile(path, module(t, v1), 0o644); err != nil {
		t.Fatal(err)
	}
	src := dirSource(t, path)
	var log bytes.Buffer
	s := newSwapperFrom(t, src, swap.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})

	secret := filepath.Join(outside, "v2.wasm")
	if err := os.WriteFile(secret, module(t, v2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	_, changed, err := swap.CheckOnce(ctx, s, src)
	var ce *swap.CandidateError
	if !errors.As(err, &ce) || ce.Step != swap.StepSource || !strings.Contains(err.Error(), "outside the watched directory") {
		t.Fatalf("a symlink out of the directory: changed %v, err %v; want a refusal at the source step", changed, err)
	}
	if s.Current().Version != "1.0.0" {
		t.Errorf("serving %s after the refusal, want 1.0.0", s.Current().Version)
	}
	ev := s.Events()[0]
	if ev.Result != swap.ResultRefused || ev.Step != swap.StepSource || !strings.Contains(ev.Reason, secret) {
		t.Errorf("the last event %+v: want the refusal naming %s", ev, secret)
	}
	if !strings.Contains(log.String(), "outside the watched directory") {
		t.Errorf("the log does not give the reason: %s", log.String())
	}
	if _, changed, err := swap.CheckOnce(ctx, s, src); changed || err != nil {
		t.Errorf("the same symlink checked again: changed %v, err %v; want nothing new", changed, err)
	}
	if n := s.Stats().FailedBy[swap.StepSource]; n != 1 {
		t.Errorf("%d refusals at the source step, want 1", n)
	}

	// A link inside the directory (relative, or absolute) is followed.
	if err := os.MkdirAll(filepath.Join(dir, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "..data", "orders.wasm"), module(t, v2), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{filepath.Join("..data", "orders.wasm"), filepath.Join(dir, "..data", "orders.wasm")} {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		c, err := src.Check(ctx)
		if err != nil {
			t.Fatalf("a symlink to %s, inside the directory: %v", target, err)
		}
		if target == filepath.Join("..data", "orders.wasm") && (c == nil || !bytes.Equal(c.Wasm, module(t, v2))) {
			t.Fatalf("a symlink to %s, inside the directory: candidate %v, want v2", target, c != nil)
		}
	}
}

// TestW6_DirSourceRefusesAFileOverTheSizeCap: a file over the cap (64 MiB
// by default, here a sparse file) is refused without being read, naming
// its size and the setting; a smaller cap is configurable.
func TestW6_DirSourceRefusesAFileOverTheSizeCap(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "orders.wasm")
	if err := os.WriteFile(path, module(t, v1), 0o644); err != nil {
		t.Fatal(err)
	}
	src := dirSource(t, path)
	s := newSwapperFrom(t, src, swap.Config{})
	huge := filepath.Join(dir, ".next")
	if err := os.WriteFile(huge, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, swap.DefaultMaxModuleBytes+1); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(huge, path); err != nil {
		t.Fatal(err)
	}
	_, _, err := swap.CheckOnce(ctx, s, src)
	var ce *swap.CandidateError
	if !errors.As(err, &ce) || ce.Step != swap.StepSource || !strings.Contains(err.Error(), "67108865 bytes") || !strings.Contains(err.Error(), "hotSwap.maxModuleBytes") {
		t.Fatalf("a file of 64 MiB + 1: %v; want it refused at the source step, naming its size and the setting", err)
	}

	small := filepath.Join(dir, "small.wasm")
	if err := os.WriteFile(small, module(t, v1), 0o644); err != nil {
		t.Fatal(err)
	}
	capped, err := swap.NewDirSource(small, 5*time.Millisecond, swap.WithMaxModuleBytes(1024))
	if err != nil {
		t.Fatal(err)
	}
	defer capped.Close()
	if _, err := capped.Check(ctx); !errors.As(err, &ce) || !strings.Contains(err.Error(), "over the limit of 1024 bytes") {
		t.Errorf("a module over a cap of 1024 bytes: %v", err)
	}
}

// TestW6_DirSourceSeesASameSizeReplacementWithinOneMtime: a module of the
// same size written over another, in place or renamed into place, with
// the same modification time (set back with Chtimes: a coarse clock gives
// that within one tick) is seen.
func TestW6_DirSourceSeesASameSizeReplacementWithinOneMtime(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"in place", "renamed"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "orders.wasm")
			a, b := []byte("module A, version 1"), []byte("module B, version 2")
			if err := os.WriteFile(path, a, 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			src := dirSource(t, path)
			if c, err := src.Check(ctx); err != nil || c == nil || !bytes.Equal(c.Wasm, a) {
				t.Fatalf("first check: %v %v", c, err)
			}
			target := path
			if how == "renamed" {
				target = filepath.Join(dir, ".next")
			}
			if err := os.WriteFile(target, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(target, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if target != path {
				if err := os.Rename(target, path); err != nil {
					t.Fatal(err)
				}
			}
			if st2, _ := os.Stat(path); st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) {
				t.Fatalf("the replacement has size %d and mtime %v, want %d and %v", st2.Size(), st2.ModTime(), st.Size(), st.ModTime())
			}
			c, err := src.Check(ctx)
			if err != nil || c == nil || !bytes.Equal(c.Wasm, b) {
				t.Fatalf("after the replacement: candidate %v, err %v; want module B", c != nil, err)
			}
			if c, err := src.Check(ctx); c != nil || err != nil {
				t.Errorf("checked again: candidate %v, err %v; want nothing new", c != nil, err)
			}
		})
	}
}

// TestW6_RefusedFileAtStartServesTheArchivedVersion: a module file the
// directory's rules refuse at start is treated as a module refused at
// start: the newest archived version serves, the refusal in the events;
// without an archive the error says what to do.
func TestW6_RefusedFileAtStartServesTheArchivedVersion(t *testing.T) {
	ctx := context.Background()
	dir, archive, outside := t.TempDir(), t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "orders.wasm")
	if err := os.WriteFile(path, module(t, v1), 0o644); err != nil {
		t.Fatal(err)
	}
	first := newSwapperFrom(t, dirSource(t, path), swap.Config{Archive: archive}) // archives v1
	if first.Current().Version != "1.0.0" {
		t.Fatalf("serving %s", first.Current().Version)
	}
	if err := os.WriteFile(filepath.Join(outside, "v2.wasm"), module(t, v2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "v2.wasm"), path); err != nil {
		t.Fatal(err)
	}
	s, err := swap.OpenOrArchived(ctx, dirSource(t, path), swap.Config{Plugin: pluginConfig(), Archive: archive})
	if err != nil {
		t.Fatalf("a symlink out of the directory at start, with an archive: %v", err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	if s.Current().Version != "1.0.0" || s.Fallbacks() != 1 {
		t.Errorf("serving %s after %d fallbacks; want the archived 1.0.0", s.Current().Version, s.Fallbacks())
	}
	_, err = swap.OpenOrArchived(ctx, dirSource(t, path), swap.Config{Plugin: pluginConfig()})
	if !errors.Is(err, swap.ErrSourceRefused) || !errors.Is(err, swap.ErrNoAccepted) || !strings.Contains(err.Error(), "outside the watched directory") {
		t.Errorf("the same without an archive: %v", err)
	}
}

// TestW6_S3SourceRefusesAnObjectOverTheSizeCap: an S3 object over the cap
// is refused at the source step, once per version, and the next version
// that fits is read.
func TestW6_S3SourceRefusesAnObjectOverTheSizeCap(t *testing.T) {
	ctx := context.Background()
	const bucket, key = "plugins", "orders.wasm"
	client := s3Server(t, bucket)
	putObject(t, client, bucket, key, bytes.Repeat([]byte{1}, 2048))
	src := swap.NewS3Source(client, bucket, key, time.Hour, swap.WithMaxObjectBytes(1024))
	_, err := src.Check(ctx)
	if !errors.Is(err, swap.ErrSourceRefused) || !strings.Contains(err.Error(), "2048 bytes or more, over the limit of 1024 bytes") {
		t.Fatalf("an object of 2048 bytes under a cap of 1024: %v", err)
	}
	if c, err := src.Check(ctx); c != nil || err != nil {
		t.Errorf("the same version polled again: candidate %v, err %v; want nothing new", c != nil, err)
	}
	putObject(t, client, bucket, key, []byte("small"))
	if c, err := src.Check(ctx); err != nil || c == nil || string(c.Wasm) != "small" {
		t.Errorf("a new version that fits: candidate %v, err %v", c, err)
	}
}
