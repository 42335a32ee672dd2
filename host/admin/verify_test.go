package admin_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

// The status page shows the last sampled verification pass of each
// projection, a drift named with the command that lists its rows, and a
// pass that could not run; /metrics exports the drift by kind.
func TestV1_StatusPageAndMetricsShowTheVerificationDrift(t *testing.T) {
	srv, m := served(t, nil)
	m.Verified("ledger", host.VerifyCounts{Rows: 40, Events: 200, Differs: 2, Missing: 1, Pending: 3}, time.Now(), time.Second, nil)
	m.Verified("other", host.VerifyCounts{}, time.Now(), time.Second, errors.New("the table does not exist"))

	code, page := get(t, srv.URL()+"/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, "<h2>Verification (sampled)</h2>")
	assert.Contains(t, page, "<td>ledger</td>")
	assert.Contains(t, page, "Drift in ledger: 3 rows of the last sample not what their events make")
	assert.Contains(t, page, "<code>host verify --projection ledger</code>")
	assert.Contains(t, page, "The last verification of other could not run: the table does not exist")

	_, metrics := get(t, srv.URL()+"/metrics")
	assert.Contains(t, metrics, `dynafold_verify_drift_rows{kind="differs",projection="ledger"} 2`)
	assert.Contains(t, metrics, `dynafold_verify_drift_rows{kind="missing",projection="ledger"} 1`)
	assert.Contains(t, metrics, `dynafold_verify_rows_checked_total{projection="ledger"} 40`)
	assert.Contains(t, metrics, `dynafold_verify_pending_events{projection="ledger"} 3`)
	assert.Contains(t, metrics, `dynafold_verify_passes_total{projection="other",result="error"} 1`)
}
