// Package asbuild builds AssemblyScript plugins for tests and
// benchmarks: it installs a project's npm packages with `npm ci` when its
// node_modules is missing or older than its package-lock.json, runs the
// project's asc compiler, and caches the module under the user's cache
// directory (os.UserCacheDir()/dynafold/asbuild), keyed by a hash of the
// sources, the asc arguments, package-lock.json and the Node version.
//
// Only the npm registry is needed; node and npm must be on PATH (tests skip
// with a clear message when they are not).
package asbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// ErrNoNode reports that node or npm is not installed.
var ErrNoNode = errors.New("asbuild: node and npm are needed to build AssemblyScript plugins")

// Project is an npm project holding the AssemblyScript compiler and the
// Extism PDK (a package.json, package-lock.json and asconfig.json).
type Project struct {
	Dir string // the project's directory (absolute or relative)
}

// Module names what to build: Entry (relative to the project, or absolute)
// compiled with Args (e.g. "--config", "asconfig.json", "--target",
// "release"); SourceDir holds the sources the module depends on, hashed for
// the cache (default: the directory of Entry).
type Module struct {
	Entry     string
	Args      []string
	SourceDir string
}

var locks sync.Map // project dir -> *sync.Mutex

// Build compiles m in project dir and returns the module's bytes. It skips
// tb when node or npm is missing and fails it on any other error.
func Build(tb testing.TB, dir string, m Module) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := BuildFile(ctx, Project{Dir: dir}, m)
	if errors.Is(err, ErrNoNode) {
		tb.Skipf("skipping: %v (install Node.js 20 and npm)", err)
	}
	if err != nil {
		tb.Fatalf("asbuild: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("asbuild: %v", err)
	}
	return b
}

// BuildFile compiles m in project p, unless an identical build is cached,
// and returns the cached module's path (which must not be modified).
func BuildFile(ctx context.Context, p Project, m Module) (string, error) {
	dir, err := filepath.Abs(p.Dir)
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", ErrNoNode
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", ErrNoNode
	}
	mu, _ := locks.LoadOrStore(dir, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	unlock, err := lockFile(filepath.Join(dir, ".asbuild.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()

	if err := install(ctx, dir); err != nil {
		return "", err
	}
	entry := m.Entry
	if !filepath.IsAbs(entry) {
		entry = filepath.Join(dir, entry)
	}
	src := m.SourceDir
	if src == "" {
		src = filepath.Dir(entry)
	}
	key, err := hash(ctx, dir, src, entry, m.Args)
	if err != nil {
		return "", err
	}
	cache, err := cacheRoot()
	if err != nil {
		return "", err
	}
	base := strings.TrimSuffix(filepath.Base(entry), filepath.Ext(entry))
	if base == "index" {
		base = filepath.Base(filepath.Dir(filepath.Dir(entry)))
	}
	out := filepath.Join(cache, base+"-"+key+".wasm")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.CreateTemp(cache, base+"-*.wasm.tmp")
	if err != nil {
		return "", err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	args := append([]string{entry}, m.Args...)
	args = append(args, "--outFile", tmpName, "--path", filepath.Join(dir, "node_modules"))
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "asc"), args...)
	cmd.Dir = dir
	if outb, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("asc %s: %w\n%s", strings.Join(args, " "), err, outb)
	}
	if err := os.Rename(tmpName, out); err != nil {
		return "", err
	}
	return out, nil
}

// install runs `npm ci` when node_modules is missing or older than
// package-lock.json.
func install(ctx context.Context, dir string) error {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return fmt.Errorf("asbuild: %w", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !st.ModTime().Before(lock.ModTime()) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "asc")); err == nil {
			return nil
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return nil
}

// hash covers the Node version, the asc arguments, the project's
// package-lock.json and asconfig.json, and every .ts file under src.
func hash(ctx context.Context, dir, src, entry string, args []string) (string, error) {
	h := sha256.New()
	ver, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("node --version: %w", err)
	}
	h.Write(ver)
	fmt.Fprintf(h, "%s\x00%q\n", entry, args)
	for _, f := range []string{"package-lock.json", "asconfig.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			h.Write(b)
		}
	}
	var files []string
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".ts") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\n", f)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

func cacheRoot() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "dynafold", "asbuild")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("asbuild cache: %w", err)
	}
	return dir, nil
}
