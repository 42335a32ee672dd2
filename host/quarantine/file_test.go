//go:build unix

package quarantine_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/quarantine"
)

// umask022 sets the process's umask to the common 022 for the test, so a
// file created with the default mode (0666) would come out 0644, and
// restores it after.
func umask022(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestW6_QuarantineFileIsPrivate: the quarantine file holds whole record
// images, so it is created readable by its owner only; a file left 0644
// by an earlier version is tightened to 0600 at the next entry, its lines
// kept.
func TestW6_QuarantineFileIsPrivate(t *testing.T) {
	umask022(t)
	ctx := context.Background()
	dir := t.TempDir()

	fresh := filepath.Join(dir, "new.jsonl")
	require.NoError(t, quarantine.NewFile(fresh).Send(ctx, quarantine.Entry{Projection: "p", Reason: "r"}))
	st, err := os.Stat(fresh)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a new quarantine file")

	old := filepath.Join(dir, "old.jsonl")
	require.NoError(t, quarantine.NewFile(old).Send(ctx, quarantine.Entry{ID: "first", Projection: "p"}))
	require.NoError(t, os.Chmod(old, 0o644))
	require.NoError(t, quarantine.NewFile(old).Send(ctx, quarantine.Entry{ID: "second", Projection: "p"}))
	st, err = os.Stat(old)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a quarantine file left 0644")
	es, err := quarantine.ReadFile(old)
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, "first", es[0].ID)
	assert.Equal(t, "second", es[1].ID)
}
