package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

const sidecarBase = `{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "native:x", "table": "rows", "checkpoint": {"field": "version"}}],
  "sidecar": %s
}`

func TestC4_SidecarConfigErrorsNameTheJSONPath(t *testing.T) {
	_, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{
    "leaseDuration": "100ms", "batchSize": 5000, "onTrimmed": "ignore",
    "failure": {"maxRetries": -1, "onFailure": {"file": "q.jsonl", "queueUrl": "https://q"}},
    "projections": {"nope": {"maxRetries": -2}}}`, 1)))
	require.Error(t, err)
	for _, want := range []string{
		"sidecar.leaseTable is required",
		"sidecar.leaseDuration is 100ms",
		"sidecar.batchSize is 5000",
		`sidecar.onTrimmed: "ignore" is not a policy`,
		"sidecar.failure.onFailure sets 2 destinations",
		`sidecar.projections.nope: names no projection`,
		`sidecar.projections.nope.maxRetries is -2`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestC4_SidecarPolicyTakesAProjectionsOwnFieldsOverTheDefaults(t *testing.T) {
	cfg, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases",
    "failure": {"maxRecordAge": "1h", "onFailure": {"file": "all.jsonl"}},
    "projections": {"summaries": {"maxRetries": 7, "bisectOnError": false}}}`, 1)))
	require.NoError(t, err)
	s := cfg.EffectiveSidecar()
	assert.Equal(t, host.DefaultSidecarBatchSize, s.BatchSize)
	assert.Equal(t, host.TrimmedStop, s.OnTrimmed)
	assert.NotEmpty(t, s.WorkerID)
	p := s.Policy("summaries")
	assert.Equal(t, 7, *p.MaxRetries)
	assert.False(t, *p.BisectOnError)
	assert.Equal(t, "all.jsonl", p.OnFailure.File, "kept from failure")
	assert.Equal(t, "1h0m0s", p.MaxRecordAge.String())
	d := s.Policy("")
	assert.Equal(t, host.DefaultMaxRetries, *d.MaxRetries)
	assert.True(t, *d.BisectOnError)
}

func TestC4_APolicyThatGivesRecordsUpNeedsADestination(t *testing.T) {
	_, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases",
    "failure": {"maxRetries": 2},
    "projections": {"summaries": {"maxRecordAge": "1h"}}}`, 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sidecar.failure.maxRetries: gives a record up after 2 retries, but there is no onFailure destination")
	assert.Contains(t, err.Error(), `sidecar.projections.summaries.maxRecordAge: gives a record up once older than 1h0m0s, but there is no onFailure destination`)

	cfg, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases"}`, 1)))
	require.NoError(t, err)
	p := cfg.EffectiveSidecar().Policy("summaries")
	assert.Nil(t, p.OnFailure)
	assert.Equal(t, -1, *p.MaxRetries, "no destination: retried until it succeeds")

	cfg, err = host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases",
    "failure": {"maxRetries": 2, "onFailure": {"file": "q.jsonl"}}, "projections": {"summaries": {"maxRetries": 5}}}`, 1)))
	require.NoError(t, err, "a projection's policy keeps the default destination")
	assert.Equal(t, "q.jsonl", cfg.EffectiveSidecar().Policy("summaries").OnFailure.File)
}

// The sidecar's files start where the plugin paths do, at the
// configuration file's directory, so `host run` and `host quarantine`
// started from anywhere read and write the same files; absolute paths stay.
func TestC4_SidecarFilesAreRelativeToTheConfigurationFile(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(t.TempDir(), "abs.jsonl")
	path := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(sidecarBase, "%s", `{
  "leaseTable": "leases", "onTrimmed": "continue", "stateFile": "state/rebuild.jsonl",
  "failure": {"maxRetries": 3, "onFailure": {"file": "q/quarantine.jsonl"}},
  "projections": {"summaries": {"onFailure": {"file": "`+abs+`"}}}}`, 1)), 0o600))
	cfg, err := host.LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "state/rebuild.jsonl"), cfg.Sidecar.StateFile)
	assert.Equal(t, filepath.Join(dir, "q/quarantine.jsonl"), cfg.Sidecar.Failure.OnFailure.File)
	assert.Equal(t, abs, cfg.Sidecar.Policy("summaries").OnFailure.File)
}
