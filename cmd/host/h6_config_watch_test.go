package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/internal/syncbuf"
)

// A running worker reads its configuration only at its start; an edit used
// to be ignored without a word (an operator's trial changed batchSize, then
// broke the JSON, and no worker said anything). Now each change is warned
// of once, saying whether the file loads and to restart the workers; going
// back to the file as read is noted.
func TestH6_RunWarnsOnceWhenItsConfigurationFileChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dynafold.json")
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o644)) }
	write(`{"endpoint": "http://127.0.0.1:8000"}`)
	logs := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	started := configSum(path)
	go func() {
		defer close(done)
		watchConfig(ctx, path, started, slog.New(slog.NewTextHandler(logs, nil)), 5*time.Millisecond)
	}()
	waitFor := func(s string, n int) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Count(logs.String(), s) == n }, 10*time.Second, 5*time.Millisecond, logs.String())
	}

	write(`{"endpoint": "http://127.0.0.1:8000", "nope": }`)
	waitFor("configuration file changed since this worker started", 1)
	assert.Contains(t, logs.String(), "loads=false")
	assert.Contains(t, logs.String(), "restart the workers one at a time")
	time.Sleep(50 * time.Millisecond) // ten more looks at the same file
	assert.Equal(t, 1, strings.Count(logs.String(), "changed since this worker started"), "once per change")

	write(`{"endpoint": "http://127.0.0.1:8000"}`)
	waitFor("again as this worker read it", 1)
	cancel()
	<-done
}
