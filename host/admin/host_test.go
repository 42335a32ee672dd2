package admin_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
)

// getHost asks url (GET) with the Host header set to host ("": the URL's)
// and returns the status and body.
func getHost(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestW6_AdminServerRefusesAForeignHost: a web page that rebinds its own
// name to 127.0.0.1 makes the browser send requests with that name as the
// Host; every route answers them 421, with what to configure, while the
// loopback names, with or without the port, are answered.
func TestW6_AdminServerRefusesAForeignHost(t *testing.T) {
	srv, _ := served(t, nil)
	_, port, _ := net.SplitHostPort(srv.Addr())
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/"} {
		for _, foreign := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1.nip.io:" + port, "10.1.2.3:" + port} {
			code, body := getHost(t, srv.URL()+path, foreign)
			assert.Equal(t, http.StatusMisdirectedRequest, code, "%s with Host %s", path, foreign)
			name, _, _ := strings.Cut(foreign, ":"+port)
			assert.True(t, strings.Contains(body, `Options.Hosts: ["`+name+`"]`), "%s with Host %s: the answer says what to configure (it is %q)", path, foreign, body)
			assert.False(t, strings.Contains(body, "dynafold_"), "%s with Host %s: a metric is served", path, foreign)
		}
		for _, own := range []string{"", "localhost", "localhost:" + port, "LocalHost:" + port, "127.0.0.1", "127.0.0.1:" + port, "[::1]", "[::1]:" + port} {
			code, body := getHost(t, srv.URL()+path, own)
			assert.Equal(t, http.StatusOK, code, "%s with Host %q: %.200s", path, own, body)
		}
	}
}

// TestW6_AdminServerAnswersTheAddressItIsReachedOn: listening on every
// address (as in a Kubernetes pod, where the kubelet probes and Prometheus
// scrapes the pod's IP with that IP as the Host), the server answers a
// Host naming the address the request arrived on, and refuses another
// address, though it is one of the machine's (127.0.0.2 and 127.0.0.3
// stand for the pod's address and another).
func TestW6_AdminServerAnswersTheAddressItIsReachedOn(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	srv, err := admin.Start(context.Background(), admin.Options{Addr: "0.0.0.0:0", AllowNonLoopback: true, Metrics: m})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(srv.Addr())
	url := "http://127.0.0.2:" + port + "/healthz"
	code, body := getHost(t, url, "") // Host: 127.0.0.2:PORT, as the kubelet sends
	assert.Equal(t, http.StatusOK, code, body)
	code, body = getHost(t, url, "127.0.0.3:"+port)
	assert.Equal(t, http.StatusMisdirectedRequest, code, body)
	assert.True(t, strings.Contains(body, "127.0.0.3"), "the answer names the Host refused: %s", body)
}

// TestW6_AdminServerAnswersTheConfiguredHosts: names listed in the admin
// section are answered (case and port aside); another name is refused,
// the answer naming the configuration setting; a listed entry that is not
// a host name is a configuration error.
func TestW6_AdminServerAnswersTheConfiguredHosts(t *testing.T) {
	ctx := context.Background()
	m := telemetry.New(telemetry.Options{})
	srv, err := admin.StartConfig(ctx, &host.AdminConfig{Addr: "127.0.0.1:0", Hosts: []string{"dynafold.internal", "10.0.0.5:9100"}}, admin.Options{Metrics: m})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	for _, h := range []string{"dynafold.internal", "DynaFold.Internal:9100", "10.0.0.5", "10.0.0.5:80"} {
		code, body := getHost(t, srv.URL()+"/healthz", h)
		assert.Equal(t, http.StatusOK, code, "Host %s: %s", h, body)
	}
	code, body := getHost(t, srv.URL()+"/healthz", "other.internal:9100")
	assert.Equal(t, http.StatusMisdirectedRequest, code)
	assert.Contains(t, body, `"admin": {"hosts": ["other.internal"]} in the configuration`)

	base := `{"eventStore": {"table": "events", "schema": "t", "streams": [{"name": "A", "composite": ["id"]}]},
	  "projections": [{"name": "p", "plugin": "native:x", "table": "rows", "checkpoint": {"field": "version"}}],
	  "admin": {"addr": "127.0.0.1:9100", "hosts": %s}}`
	cfg, err := host.ParseConfig([]byte(strings.Replace(base, "%s", `["dynafold.internal"]`, 1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"dynafold.internal"}, cfg.Admin.Hosts)
	_, err = host.ParseConfig([]byte(strings.Replace(base, "%s", `["http://dynafold.internal/"]`, 1)))
	assert.ErrorContains(t, err, `admin.hosts[0]: "http://dynafold.internal/" is not a host name`)
}
