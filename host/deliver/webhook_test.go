package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
)

// recorded is one request a test server received.
type recorded struct {
	header http.Header
	body   []byte
}

// recorder is an httptest.Server answering every request with status and
// body, and keeping what it received.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
}

func newRecorder(t *testing.T, status int, body string) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, recorded{req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.requests...)
}

func TestO2_WebhookPostsTheEffect(t *testing.T) {
	srv := newRecorder(t, http.StatusNoContent, "")
	w, err := NewWebhook(srv.URL+"/effects", WebhookOptions{
		Header: http.Header{"authorization": {"Bearer t"}, "Content-Type": {"text/plain"}},
	})
	require.NoError(t, err)

	e := sample()
	require.NoError(t, w.Deliver(context.Background(), e))
	require.NoError(t, w.Deliver(context.Background(), e), "a redelivery")
	second := sample()
	second.Index = 1
	require.NoError(t, w.Deliver(context.Background(), second))
	next := sample()
	next.Version = 4
	require.NoError(t, w.Deliver(context.Background(), next))

	reqs := srv.got()
	require.Len(t, reqs, 4)
	want, err := e.JSON(Plain)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(reqs[0].body))
	var body map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].body, &body))
	assert.Equal(t, e.IdempotencyKey(), body["idempotencyKey"])

	h := reqs[0].header
	assert.Equal(t, "application/json", h.Get("Content-Type"), "the webhook's own Content-Type wins")
	assert.Len(t, h.Values("Content-Type"), 1)
	assert.Equal(t, "Bearer t", h.Get("Authorization"), "extra headers are sent")
	assert.Equal(t, e.IdempotencyKey(), h.Get("Idempotency-Key"))

	keys := []string{}
	for _, r := range reqs {
		keys = append(keys, r.header.Get("Idempotency-Key"))
	}
	assert.Equal(t, keys[0], keys[1], "the same effect twice: the same key")
	assert.NotEqual(t, keys[0], keys[2], "another index: another key")
	assert.NotEqual(t, keys[0], keys[3], "another version: another key")
	assert.NotEqual(t, keys[2], keys[3])
}

func TestO2_WebhookAnswers(t *testing.T) {
	long := strings.Repeat("x", 3*snippetMax)
	tests := []struct {
		name      string
		status    int
		body      string
		ok        bool
		permanent bool
		snippet   string
	}{
		{"200 OK", 200, "thanks", true, false, ""},
		{"202 Accepted", 202, "", true, false, ""},
		{"500 retryable", 500, "database down", false, false, `"database down"`},
		{"503 retryable", 503, "", false, false, "(empty)"},
		{"408 retryable", 408, "", false, false, ""},
		{"429 retryable", 429, "slow down", false, false, `"slow down"`},
		{"400 permanent", 400, `{"error":"unknown shipment"}`, false, true, `"{\"error\":\"unknown shipment\"}"`},
		{"404 permanent", 404, "", false, true, ""},
		{"long body is cut", 422, long, false, true, `"` + long[:snippetMax] + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecorder(t, tt.status, tt.body)
			w, err := NewWebhook(srv.URL, WebhookOptions{})
			require.NoError(t, err)
			err = w.Deliver(context.Background(), sample())
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var de *Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.status, de.Status)
			assert.Equal(t, tt.permanent, errors.Is(err, ErrPermanent), err.Error())
			msg := err.Error()
			assert.Contains(t, msg, srv.URL, "the error names the URL")
			assert.Contains(t, msg, http.StatusText(tt.status))
			assert.Contains(t, msg, "effect 0 of Order o-1 v3")
			assert.Contains(t, msg, tt.snippet)
			t.Log(msg)
			assert.Less(t, len(msg), 2*snippetMax, "the body is bounded in the message")
			if tt.permanent {
				assert.Contains(t, msg, "retrying will not help")
			} else {
				assert.Contains(t, msg, "next drain delivers it again")
			}
		})
	}
}

func TestO2_WebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	w, err := NewWebhook(srv.URL, WebhookOptions{Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	err = w.Deliver(context.Background(), sample())
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, ErrPermanent, "a timeout is retryable")
	assert.Contains(t, err.Error(), "no answer within the webhook's timeout (50ms)")
	assert.Contains(t, err.Error(), srv.URL)

	// The caller's context bounds a delivery too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, err = NewWebhook(srv.URL, WebhookOptions{Timeout: -1})
	require.NoError(t, err)
	err = w.Deliver(ctx, sample())
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrPermanent)
}

func TestO2_WebhookRefusesWhatItCannotSend(t *testing.T) {
	for _, u := range []string{"", "example.com/x", "ftp://example.com/x", "http://"} {
		_, err := NewWebhook(u, WebhookOptions{})
		assert.Error(t, err, "%q", u)
	}
	_, err := NewWebhook("http://127.0.0.1/x", WebhookOptions{Encoding: Encoding(7)})
	assert.Error(t, err)

	srv := newRecorder(t, 200, "")
	w, err := NewWebhook(srv.URL, WebhookOptions{})
	require.NoError(t, err)
	e := sample()
	e.Value = abi.N("not a number")
	err = w.Deliver(context.Background(), e)
	assert.ErrorIs(t, err, ErrPermanent, "an effect with no JSON form will never be sent")
	assert.Empty(t, srv.got(), "nothing was posted")
}
