package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/scaffold"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestH2_PluginNewConfigListsTheEventTypes: the dynafold.json of every
// language's project lists its plugin's event types on its stream, so
// `host append` refuses a misspelled type (it was stored for good, and
// the generated evolve skipped it without a word), and takes its endpoint
// from --endpoint, the README's ddblocal command with it.
func TestH2_PluginNewConfigListsTheEventTypes(t *testing.T) {
	env := testenv.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	endpoint := env.Server.Endpoint()
	for lang, want := range map[string][]string{
		scaffold.LangGo:             {"InventoryOpened", "InventoryIncreased", "InventoryDecreased"},
		scaffold.LangRust:           {"AccountOpened", "MoneyDeposited", "MoneyWithdrawn"},
		scaffold.LangC:              {"AccountOpened", "MoneyDeposited", "MoneyWithdrawn"},
		scaffold.LangAssemblyScript: {"OrderPlaced", "ItemAdded", "OrderShipped"},
	} {
		dir := filepath.Join(t.TempDir(), "inventory")
		_, err := runPluginCmd(t, "new", "inventory", "--lang", lang, "--dir", dir, "--endpoint", endpoint)
		require.NoError(t, err, lang)
		cfgPath := filepath.Join(dir, "dynafold.json")
		cfg, err := host.LoadConfig(cfgPath)
		require.NoError(t, err, lang)
		assert.Equal(t, endpoint, cfg.Endpoint, lang)
		require.Len(t, cfg.EventStore.Streams, 1, lang)
		assert.Equal(t, want, cfg.EventStore.Streams[0].EventTypes, lang)
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		require.NoError(t, err)
		if lang == scaffold.LangGo || lang == scaffold.LangAssemblyScript {
			assert.Contains(t, string(readme), "host ddblocal --addr "+strings.TrimPrefix(endpoint, "http://")+" &", lang)
		}
		if lang != scaffold.LangGo {
			continue
		}
		// The generated configuration, as a user runs it.
		old := tablesOut
		tablesOut = &syncbuf.Buffer{}
		require.NoError(t, runTables(context.Background(), []string{"create", "--config", cfgPath}))
		tablesOut = old
		err = runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Inventory", "--id", "i-1", "--type", "InventoryOpend"})
		require.Error(t, err, "a misspelled event type")
		assert.Contains(t, err.Error(), `"InventoryOpend" is not one of the stream's event types`)
		captureStdout(t, func() {
			require.NoError(t, runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Inventory", "--id", "i-1", "--type", "InventoryOpened", "--data", `{"name":"bolts"}`}))
		})
	}
	// The default stays where host ddblocal listens unless told otherwise.
	dir := filepath.Join(t.TempDir(), "inventory")
	_, err := runPluginCmd(t, "new", "inventory", "--dir", dir)
	require.NoError(t, err)
	cfg, err := host.LoadConfig(filepath.Join(dir, "dynafold.json"))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8000", cfg.Endpoint)
	_, err = runPluginCmd(t, "new", "inventory", "--dir", t.TempDir(), "--endpoint", "127.0.0.1:8001")
	assert.ErrorContains(t, err, "give the DynamoDB endpoint as a URL")
}
