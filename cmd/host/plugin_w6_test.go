package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmtest"
)

// TestW6_ValidateSaysTheStartFunctionNeverReturns: `host plugin validate`
// on a module whose start function never returns ends once its --timeout
// is over and says why (it used to spin at 100% CPU with no output).
func TestW6_ValidateSaysTheStartFunctionNeverReturns(t *testing.T) {
	for _, m := range []struct {
		name string
		wasm []byte
	}{
		{"raw", wasmtest.RawPlugin{Yield: true, StartLoop: true}.Bytes()},
		{"extism", wasmtest.ExtismPlugin{StartLoop: true}.Bytes()},
	} {
		t.Run(m.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "looper.wasm")
			require.NoError(t, os.WriteFile(path, m.wasm, 0o600))
			done := make(chan error, 1)
			go func() {
				_, err := runPluginCmd(t, "validate", path, "--timeout", "300ms")
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				t.Log(err)
				assert.ErrorIs(t, err, plugin.ErrTimeout)
				for _, want := range []string{path + " was refused: it ran past --timeout 300ms", "start function: timeout after 300ms"} {
					assert.Contains(t, err.Error(), want)
				}
			case <-time.After(time.Minute):
				t.Fatal("validate still running after a minute")
			}
		})
	}
}
