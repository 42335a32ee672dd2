package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynafold/dynafold/host/sidecar"
)

// host status's WORKER table shows each worker's plugin versions, and a
// projection served by two versions gets a line naming which worker runs
// which (a rolling deploy, or a worker left behind); one version, none.
func TestC6_StatusNamesTheWorkersOfEachPluginVersion(t *testing.T) {
	ws := []sidecar.FleetWorker{
		{ID: "w1", Plugins: map[string]string{"inventory": "inventory@1.0.0", "stock": "stock@1.0.0"}},
		{ID: "w2", Plugins: map[string]string{"inventory": "inventory@2.0.0", "stock": "stock@1.0.0"}},
		{ID: "w3", Plugins: map[string]string{"inventory": "inventory@1.0.0", "stock": "stock@1.0.0"}},
		{ID: "w4"},
	}
	assert.Equal(t, "inventory@1.0.0,stock@1.0.0", pluginsText(ws[0].Plugins))
	assert.Equal(t, "-", pluginsText(ws[3].Plugins))
	assert.Equal(t, []string{"projection inventory is served by 2 plugin versions: inventory@1.0.0 (w1, w3), inventory@2.0.0 (w2): a rolling deploy under way, or a worker left behind"},
		mixedVersions(ws))
	assert.Empty(t, mixedVersions(ws[:1]))
}
