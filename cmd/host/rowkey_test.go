package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
)

func TestM8_RowKeyArgReadsPlainAndDynamoDBJSON(t *testing.T) {
	want := abi.Item{"pk": abi.S("Shipment#sh-1"), "sk": abi.S("S")}
	for _, s := range []string{`{"pk": "Shipment#sh-1", "sk": "S"}`, `{"pk": {"S": "Shipment#sh-1"}, "sk": {"S": "S"}}`} {
		got, err := rowKeyArg(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	got, err := rowKeyArg(`{"id": 7}`)
	require.NoError(t, err)
	assert.Equal(t, abi.Item{"id": abi.N("7")}, got)
	for _, bad := range []string{``, `[]`, `{}`, `pk=x`} {
		_, err := rowKeyArg(bad)
		assert.ErrorContains(t, err, "--row", bad)
	}
}

func TestM8_RebuildInstanceNeedsRow(t *testing.T) {
	err := runRebuild(t.Context(), []string{"--instance", "weigh#w-1"})
	assert.ErrorContains(t, err, "--instance and --drop-others need --row")
	err = runRebuild(t.Context(), []string{"--row", `{"pk": "x"}`, "--instance", "nohash"})
	assert.ErrorContains(t, err, "<source>#<streamId>")
}
