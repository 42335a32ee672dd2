package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A duration given without its unit is refused with what to write instead
// (Go's own flag parsing says only "parse error"), and one with its unit is
// read as before.
func TestH6_ADurationFlagWithoutItsUnitSaysWhatToWrite(t *testing.T) {
	_, err := ddblocalOptions([]string{"--latency", "5"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid value "5" for flag -latency: a duration needs its unit: 5ms, 5s or 5m`)
	assert.NotContains(t, err.Error(), "parse error")

	_, err = ddblocalOptions([]string{"--table-delay", "soon"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a duration: want a number with its unit, such as 5ms, 2s or 1m30s")

	o, err := ddblocalOptions([]string{"--latency", "5ms", "--table-delay", "1.5s"})
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond, o.Faults.Latency)
	assert.Equal(t, 1500*time.Millisecond, o.TableDelay)
}
