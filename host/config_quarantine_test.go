package host_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

func quarantineConfig(section string) []byte {
	return fmt.Appendf(nil, `{
	  "eventStore": {"table": "events", "schema": "test", "streams": [{"name": "Acct", "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "ledger", "checkpoint": {"field": "version"}}]%s}`, section)
}

// The quarantine section is read and checked: a table name is required,
// must be one DynamoDB accepts, and must not be the event table or a read
// model's table.
func TestC4_QuarantineConfigIsValidated(t *testing.T) {
	cfg, err := host.ParseConfig(quarantineConfig(`, "quarantine": {"table": "ledger-quarantine"}`))
	require.NoError(t, err)
	require.NotNil(t, cfg.Quarantine)
	assert.Equal(t, "ledger-quarantine", cfg.Quarantine.Table)
	cfg, err = host.ParseConfig(quarantineConfig(""))
	require.NoError(t, err)
	assert.Nil(t, cfg.Quarantine, "no section, no quarantine table")

	for section, want := range map[string]string{
		`, "quarantine": {}`:                  "quarantine.table is required",
		`, "quarantine": {"table": "a b"}`:    `quarantine.table: "a b" is not a DynamoDB table name`,
		`, "quarantine": {"table": "events"}`: `"events" is the event table`,
		`, "quarantine": {"table": "ledger"}`: `"ledger" is the table of projection "ledger"`,
		`, "quarantine": {"tabel": "x-q"}`:    "tabel",
	} {
		_, err := host.ParseConfig(quarantineConfig(section))
		require.Error(t, err, section)
		assert.Contains(t, err.Error(), want, section)
	}
}
