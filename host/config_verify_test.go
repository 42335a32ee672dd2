package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

func TestV1_SidecarVerifyConfigErrorsNameTheJSONPath(t *testing.T) {
	_, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases",
    "verify": {"sample": 2, "grace": "-1s", "segments": -3}}`, 1)))
	require.Error(t, err)
	for _, want := range []string{
		`sidecar.verify.every is required: how often to verify a sample of the rows, e.g. "10m"`,
		"sidecar.verify.sample is 2: use a fraction above 0 and at most 1",
		"sidecar.verify.grace is negative (-1s)",
		"sidecar.verify.segments is -3",
	} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "verify": {"every": "10ms"}}`, 1)))
	assert.ErrorContains(t, err, "sidecar.verify.every is 10ms: use at least 1s")
	_, err = host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "verify": {"evry": "1m"}}`, 1)))
	assert.ErrorContains(t, err, `did you mean "every"?`)

	cfg, err := host.ParseConfig([]byte(strings.Replace(sidecarBase, "%s", `{"leaseTable": "leases", "verify": {"every": "10m"}}`, 1)))
	require.NoError(t, err)
	v := cfg.Sidecar.Verify.Effective()
	assert.Equal(t, host.Duration(10*time.Minute), v.Every)
	assert.Equal(t, host.DefaultVerifySample, v.Sample)
	assert.Equal(t, host.Duration(host.DefaultVerifyGrace), v.Grace)
	assert.Equal(t, host.DefaultVerifySegments, v.Segments)
}
