package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// waitUntil polls cond until it holds, for at most a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// `host plugin rollback --file` puts an accepted version back where a host
// watches: the host logs it as a rollback and counts it as one (it logged
// "rollback": false and counted it under swapped), and the command names
// the version (it named the archive file). A refused candidate is not
// announced as loaded first.
func TestH3_RollbackByCommandIsLoggedAndCountedAsARollback(t *testing.T) {
	dir, archive := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "orders.wasm")
	put := func(src string) {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		tmp := filepath.Join(dir, ".next")
		require.NoError(t, os.WriteFile(tmp, b, 0o644))
		require.NoError(t, os.Rename(tmp, path))
	}
	put(v1Path(t))
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil)) // INFO and above, as host run logs
	src, err := swap.NewDirSource(path, 20*time.Millisecond)
	require.NoError(t, err)
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := swap.Open(ctx, src, swap.Config{Archive: archive, Logger: log})
	require.NoError(t, err)
	defer s.Close(context.Background())
	done := make(chan error, 1)
	go func() { done <- swap.Watch(ctx, s, src) }()

	put(v2Path(t))
	waitUntil(t, "2.0.0 swapped in", func() bool { return s.Current().Version == "2.0.0" })
	put(wasmbuild.BuildPath(t, "../../host/swap/testdata/v2trap")) // its self test traps
	waitUntil(t, "the trapping module refused", func() bool { return s.Stats().Failed == 1 })
	put(v2Path(t)) // the serving version again: unchanged

	out, err := runPluginCmd(t, "rollback", "--file", path, "--archive", archive)
	require.NoError(t, err)
	assert.Contains(t, out, path+": order-summary@1.0.0 is back (sha256 ")
	waitUntil(t, "1.0.0 rolled back in", func() bool { return s.Current().Version == "1.0.0" })

	st := s.Stats()
	assert.EqualValues(t, 2, st.Swaps, "2.0.0, then 1.0.0")
	assert.EqualValues(t, 1, st.Rollbacks, "plugin_swaps_total{result=\"rollback\"}")
	assert.EqualValues(t, 1, st.Swaps-st.Rollbacks, "plugin_swaps_total{result=\"swapped\"}")
	text := logs.String()
	assert.Contains(t, text, `msg="plugin rolled back" from=order-summary@2.0.0 to=order-summary@1.0.0`)
	assert.Contains(t, text, "rollback=true")
	assert.Contains(t, text, "plugin candidate refused")
	assert.NotContains(t, text, `msg="plugin loaded"`, "a module is not announced before its checks:\n%s", text)
	cancel()
	require.NoError(t, <-done)
}
