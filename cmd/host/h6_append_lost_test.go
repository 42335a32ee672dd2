package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

// TestH6_AnAppendWhoseAnswerWasLostSaysTheEventMayBeThere: the server
// stores the append's write and goes away before it answers (a ddblocal
// killed mid-request), so every retry finds nothing listening. host append
// does not only say that nothing answered: it says that the event may have
// been appended and how to look before appending it again. The event is
// indeed there.
func TestH6_AnAppendWhoseAnswerWasLostSaysTheEventMayBeThere(t *testing.T) {
	cfgPath, env, _ := orderConfig(t)
	target, err := url.Parse(env.Server.Endpoint())
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
			proxy.ServeHTTP(w, r)
			return
		}
		// The write is stored, and the server goes away before answering.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		srv.Listener.Close()
		c, _, herr := w.(http.Hijacker).Hijack()
		if herr == nil {
			c.Close()
		}
	}))
	t.Cleanup(srv.Close)

	lost := configAt(t, cfgPath, srv.URL)

	captureStdout(t, func() {
		err = runAppend(context.Background(), []string{"--config", lost, "--stream", "Order", "--id", "o-lost", "--type", "OrderPlaced"})
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, host.ErrEndpointUnreachable)
	for _, want := range []string{"nothing answered at", "an earlier attempt went out and got no answer",
		"The event may have been appended", "host capture --config " + lost + " --stream Order --id o-lost", "--expect N"} {
		assert.Contains(t, err.Error(), want)
	}

	// It was: the stream's head is the event.
	h, err := host.New(context.Background(), mustLoad(t, cfgPath), host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(context.Background())
	head, err := h.Head(context.Background(), "Order", "o-lost")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head)
}

// configAt writes a copy of the configuration at cfgPath with its
// endpoint set to endpoint, and returns its path.
func configAt(t *testing.T, cfgPath, endpoint string) string {
	t.Helper()
	var cfg map[string]any
	b, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["endpoint"] = endpoint
	path := filepath.Join(t.TempDir(), "endpoint.json")
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

func mustLoad(t *testing.T, path string) *host.Config {
	t.Helper()
	cfg, err := host.LoadConfig(path)
	require.NoError(t, err)
	return cfg
}

// TestH6_AnAppendWhoseAnswerWasLostOnceIsStoredOnce: the server stores the
// append's write and drops the connection before answering, once; the
// client's retry reaches it. The retry carries the first attempt's client
// request token, so the server answers it as the transaction already
// applied: host append (at the head, without --expect) prints version 1
// and the stream holds one event, not the same event twice.
func TestH6_AnAppendWhoseAnswerWasLostOnceIsStoredOnce(t *testing.T) {
	cfgPath, env, _ := orderConfig(t)
	target, err := url.Parse(env.Server.Endpoint())
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var dropped atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") || dropped.Load() {
			proxy.ServeHTTP(w, r)
			return
		}
		dropped.Store(true)
		proxy.ServeHTTP(httptest.NewRecorder(), r) // stored
		if c, _, herr := w.(http.Hijacker).Hijack(); herr == nil {
			c.Close() // and the answer lost
		}
	}))
	t.Cleanup(srv.Close)
	flaky := configAt(t, cfgPath, srv.URL)

	printed := captureStdout(t, func() {
		err = runAppend(context.Background(), []string{"--config", flaky, "--stream", "Order", "--id", "o-once", "--type", "OrderPlaced"})
	})
	require.NoError(t, err)
	require.True(t, dropped.Load(), "the first answer was not dropped")
	assert.Contains(t, printed, "Order o-once v1 OrderPlaced")
	h, err := host.New(context.Background(), mustLoad(t, cfgPath), host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(context.Background())
	head, err := h.Head(context.Background(), "Order", "o-once")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), head, "the event was appended twice")
}
