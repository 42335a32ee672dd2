package wasmbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// SDKRust is the Rust guest SDK's crate, sdk-guest/rust of this checkout.
func SDKRust() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "sdk-guest", "rust")
}

// BuildRust builds the cdylib crate in dir for Wasm and returns the
// module's bytes. It skips tb, with one line naming the packages to
// install, when no Rust toolchain for Wasm is installed, and fails it on
// any other error.
func BuildRust(tb testing.TB, dir string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	path, err := BuildRustFile(ctx, dir)
	skipIfMissing(tb, err)
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("wasmbuild: %v", err)
	}
	return b
}

// BuildRustFile builds the cdylib crate in dir (cargo build --release for
// the toolchain's Wasm target), unless an identical build is cached, and
// returns the cached module's path. The cache key covers the toolchain's
// versions, the crate's files and the SDK's.
func BuildRustFile(ctx context.Context, dir string) (string, error) {
	tc, err := FindRust()
	if err != nil {
		return "", err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	mu, _ := locks.LoadOrStore("rust:"+dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	lib, err := crateLib(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", tc.Target, versionOf(ctx, tc.Rustc, nil, "-V"), versionOf(ctx, tc.Cargo, tc.Env(), "-V"))
	for _, d := range []string{dir, SDKRust()} {
		if err := hashTree(h, d, func(p string) bool {
			return strings.HasSuffix(p, ".rs") || strings.HasSuffix(p, ".toml") || strings.HasSuffix(p, ".lock")
		}); err != nil {
			return "", err
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:24]
	cache, err := cacheRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(cache, filepath.Base(dir)+"-rs-"+key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	targetDir, err := CargoTargetDir("wasm")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, tc.Cargo, "build", "--release", "--offline", "--target", tc.Target,
		"--manifest-path", filepath.Join(dir, "Cargo.toml"), "--target-dir", targetDir)
	cmd.Env = tc.Env()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cargo build %s: %w\n%s", dir, err, b)
	}
	built, err := os.ReadFile(filepath.Join(targetDir, tc.Target, "release", lib+".wasm"))
	if err != nil {
		return "", err
	}
	return out, writeAtomic(cache, out, built)
}

var (
	packageName = regexp.MustCompile(`(?m)^\[package\][^\[]*?^name\s*=\s*"([^"]+)"`)
	libName     = regexp.MustCompile(`(?m)^\[lib\][^\[]*?^name\s*=\s*"([^"]+)"`)
)

// crateLib returns the library name of the crate in dir (its [lib] name,
// else its package name with - as _).
func crateLib(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		return "", err
	}
	if m := libName.FindSubmatch(b); m != nil {
		return string(m[1]), nil
	}
	if m := packageName.FindSubmatch(b); m != nil {
		return strings.ReplaceAll(string(m[1]), "-", "_"), nil
	}
	return "", fmt.Errorf("%s/Cargo.toml: no package name", dir)
}

// hashTree hashes the files under dir that keep says, in order, skipping
// target directories.
func hashTree(h interface{ Write([]byte) (int, error) }, dir string, keep func(string) bool) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "target" || d.Name() == "build") {
			return filepath.SkipDir
		}
		if !d.IsDir() && keep(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		if err := hashFile(h, f); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes b to path through a temporary file in dir, so that
// readers never see a partial module.
func writeAtomic(dir, path string, b []byte) error {
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// BuildRustPath is BuildRust returning the cached module's path.
func BuildRustPath(tb testing.TB, dir string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	path, err := BuildRustFile(ctx, dir)
	skipIfMissing(tb, err)
	return path
}

// CargoTargetDir is a cargo target directory under the build cache, kept
// between runs so that cargo builds incrementally: "wasm" holds the
// modules' builds, other names other builds (the native tests').
func CargoTargetDir(name string) (string, error) {
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "cargo-"+name), nil
}
