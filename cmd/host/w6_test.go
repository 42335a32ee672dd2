//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestW6_CaptureFileIsPrivate: `host capture --out` writes whole event
// records, so the file is created readable by its owner only (umask 022),
// and a file it overwrites that was 0644 ends 0600.
func TestW6_CaptureFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	cfgPath, _, _ := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	dir := t.TempDir()
	fresh, reused := filepath.Join(dir, "batch.json"), filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(reused, []byte("{}"), 0o644))
	for _, out := range []string{fresh, reused} {
		require.Equal(t, 0, run(context.Background(), []string{"capture", "--config", cfgPath, "--stream", "Order", "--out", out}, os.Stdout, os.Stderr))
		st, err := os.Stat(out)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), out)
	}
}
