package plugin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/host/plugin"
)

// goldens holds, per set of modules, a cache directory Precompile filled
// once in this test process (under goldenRoot, which TestMain removes).
var goldens struct {
	sync.Mutex
	dirs map[string]string
}

// precompiled returns a new directory of the test holding what
// plugin.Precompile writes for modules, in order, into an empty directory
// with no key configured: compiled code, manifests, instrumented modules
// and the generated key file. It is a copy of a directory precompiled once
// per test process, so the tests whose setup is a precompiled cache (not
// the ones about Precompile itself) do not compile the same module again
// each; every file keeps its mode, and the copy belongs to this user as
// Precompile's output does.
func precompiled(t *testing.T, modules ...[]byte) string {
	t.Helper()
	h := sha256.New()
	for _, m := range modules {
		sum := sha256.Sum256(m)
		h.Write(sum[:])
	}
	id := hex.EncodeToString(h.Sum(nil))
	goldens.Lock()
	golden, ok := goldens.dirs[id]
	if !ok {
		golden = filepath.Join(goldenRoot, id[:16])
		for _, m := range modules {
			if err := plugin.Precompile(context.Background(), m, plugin.Config{CacheDir: golden}); err != nil {
				goldens.Unlock()
				t.Fatalf("precompile: %v", err)
			}
		}
		if goldens.dirs == nil {
			goldens.dirs = map[string]string{}
		}
		goldens.dirs[id] = golden
	}
	goldens.Unlock()
	dir := t.TempDir()
	if err := copyTree(golden, dir); err != nil {
		t.Fatalf("copy the precompiled cache: %v", err)
	}
	return dir
}

// copyTree copies the directories and regular files under src into dst
// (which exists), with their modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case rel == ".":
			return os.Chmod(dst, info.Mode().Perm())
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm())
		case d.Type().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		default:
			return &fs.PathError{Op: "copy", Path: path, Err: fs.ErrInvalid}
		}
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
