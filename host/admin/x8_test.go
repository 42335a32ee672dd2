package admin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/telemetry"
)

// pauses records the pause calls the admin endpoints make.
type pauses struct {
	mu    sync.Mutex
	calls []string
}

func (p *pauses) pause(_ context.Context, projection string, paused bool, by, reason string) error {
	if projection != "summaries" {
		return fmt.Errorf("%w %q", host.ErrUnknownProjection, projection)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("%s %v by %s: %s", projection, paused, by, reason))
	return nil
}

func post(t *testing.T, h http.Handler, path, auth string) (int, string, http.Header) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b), rec.Header()
}

// The admin server's endpoints that change state refuse everyone while
// the configuration names no token, and answer only a request that
// presents it: pausing and resuming a projection, with who did it and why.
func TestX8_AdminPauseEndpointsAnswerOnlyTheConfiguredToken(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	p := &pauses{}
	off := admin.Handler(admin.Options{Metrics: m, Pause: p.pause, Worker: "w-1"})
	code, body, _ := post(t, off, "/projections/summaries/pause", "Bearer anything")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, `"admin": {"token"`)

	on := admin.Handler(admin.Options{Metrics: m, Pause: p.pause, Worker: "w-1", Token: "s3cret-token"})
	for _, auth := range []string{"", "Bearer wrong", "Basic s3cret-token", "Bearer s3cret-token-and-more"} {
		code, _, hdr := post(t, on, "/projections/summaries/pause", auth)
		assert.Equal(t, http.StatusUnauthorized, code, auth)
		assert.Contains(t, hdr.Get("WWW-Authenticate"), "Bearer", auth)
	}
	assert.Empty(t, p.calls, "nothing paused without the token")

	code, body, _ = post(t, on, "/projections/summaries/pause?reason=reindex", "Bearer s3cret-token")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "projection summaries paused across the fleet")
	code, body, _ = post(t, on, "/projections/summaries/resume", "Bearer s3cret-token")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "projection summaries resumed across the fleet")
	assert.Equal(t, []string{"summaries true by admin API of worker w-1: reindex", "summaries false by admin API of worker w-1: "}, p.calls)
	code, _, _ = post(t, on, "/projections/nope/pause", "Bearer s3cret-token")
	assert.Equal(t, http.StatusNotFound, code)

	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/projections/summaries/pause", nil)
	rec := httptest.NewRecorder()
	on.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "only POST changes state")
}

type opsSource struct{}

func (opsSource) Projections() []string  { return []string{"summaries", "search"} }
func (opsSource) IsPaused(p string) bool { return p == "search" }
func (opsSource) Breakers() []host.BreakerStatus {
	return []host.BreakerStatus{{Projection: "summaries", Target: "webhook https://example.com/x",
		BreakerStats: deliver.BreakerStats{State: deliver.BreakerOpen, OpenUntil: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Opened: 2, Refused: 7}}}
}

// The status page shows the paused projections and the delivery breakers
// with their state.
func TestX8_StatusPageShowsPausedProjectionsAndBreakers(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	m.ServeOps(opsSource{})
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	rec := httptest.NewRecorder()
	admin.Handler(admin.Options{Metrics: m}).ServeHTTP(rec, req)
	page := rec.Body.String()
	require.Equal(t, http.StatusOK, rec.Code, page)
	assert.Contains(t, page, `<td>search</td><td><span class="problem">paused</span></td>`)
	assert.Contains(t, page, `id="breakers"`)
	assert.Contains(t, page, `<td>webhook https://example.com/x</td><td class="problem">open</td><td>2026-03-01T12:00:00Z</td>`)
	assert.True(t, strings.Contains(page, "<td>7</td>"), "refused deliveries counted")
}

// The status page shows the last sweep of each projection's pending
// effects on the worker that sweeps: how many wait, in how many rows, the
// oldest's age; a worker that stops sweeping drops it.
func TestO5_StatusPageShowsThePendingEffectsOfTheLastSweep(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	at := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	m.OutboxSwept(host.OutboxSweep{Projection: "summaries", Pending: 7, Rows: 3, Oldest: at.Add(-90 * time.Second), Delivered: 2}, at, nil)
	page := func() string {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		rec := httptest.NewRecorder()
		admin.Handler(admin.Options{Metrics: m}).ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		return rec.Body.String()
	}
	assert.Contains(t, page(), `<td>summaries</td><td>2026-12-05T01:00:00Z</td><td class="problem">7</td><td>3</td><td>1m30s</td><td>2</td>`)
	m.NotSweeping("summaries")
	assert.NotContains(t, page(), `id="outbox"`)
}
