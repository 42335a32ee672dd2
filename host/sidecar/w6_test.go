//go:build unix

package sidecar_test

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestW6_StateFileIsPrivate: the state file the reader writes when stream
// records were trimmed unread is created readable by its owner only, with
// the umask at the common 022.
func TestW6_StateFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	state := filepath.Join(t.TempDir(), "state.jsonl")
	// one shard: the trimmed records must fall in the shard w1 checkpointed
	e := start(t, ddblocal.StreamOptions{Shards: 1, Retention: time.Minute}, host.SidecarConfig{OnTrimmed: host.TrimmedContinue, StateFile: state, BatchSize: 2})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 2)
	var spans []span
	var mu sync.Mutex
	stop := run(e.reader(t, h, "w1", newRecorder("w1", &spans, &mu)))
	e.waitRows(t, map[string]string{"a": foldLog(2)}, 10*time.Second)
	require.NoError(t, stop(nil))
	appendAdds(t, h, "lost", 0, 3)
	e.clock.Jump(2 * time.Minute) // past the retention: the records are trimmed unread

	stop = run(e.reader(t, h, "w2", newRecorder("w2", &spans, &mu)))
	appendAdds(t, h, "after", 0, 2)
	e.waitRows(t, map[string]string{"after": foldLog(2)}, 10*time.Second)
	require.NoError(t, stop(nil))
	st, err := os.Stat(state)
	require.NoError(t, err, "the reader flags the rebuild in the state file")
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}
