package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// DefaultTimeout bounds one webhook delivery when WebhookOptions.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// IdleConns is the number of idle connections per host a Webhook given no
// client keeps open: the rows of a batch deliver at once, and the next
// batch reuses their connections instead of opening (and, over https,
// handshaking) new ones.
const IdleConns = 100

// webhookTransport is the transport of every Webhook given no client.
var webhookTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = IdleConns
	return t
}()

// snippetMax bounds the response body quoted in a webhook's error; drainMax
// bounds what is read past it so the connection can be reused.
const (
	snippetMax = 512
	drainMax   = 64 << 10
)

// WebhookOptions configures a Webhook. The zero value is ready to use.
type WebhookOptions struct {
	// Client sends the requests; nil means a client of the webhook's own on
	// a transport with http.DefaultTransport's settings that keeps up to
	// IdleConns connections per host open (http.DefaultTransport keeps 2).
	Client *http.Client
	// Timeout bounds one delivery, response body included: 0 means
	// DefaultTimeout, a negative value no bound but the context's.
	Timeout time.Duration
	// Header holds extra headers sent with every delivery (e.g.
	// Authorization). Content-Type and Idempotency-Key are always the
	// webhook's own.
	Header http.Header
	// Encoding of the posted JSON; Plain by default.
	Encoding Encoding
}

// Webhook delivers an effect by POSTing its JSON form to a URL, with the
// headers Content-Type: application/json and Idempotency-Key: the effect's
// idempotency key. A 2xx answer is a delivery; 408, 429 and 5xx answers, a
// timeout and a network failure are retryable errors; any other answer is
// permanent (ErrPermanent). A Webhook is safe for concurrent use.
type Webhook struct {
	url    string
	client *http.Client
	opts   WebhookOptions // Header cloned, Timeout defaulted
}

// NewWebhook returns a Webhook posting to rawURL, an http or https URL.
func NewWebhook(rawURL string, o WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook URL %q: want an http or https URL such as https://example.com/effects", rawURL)
	}
	if err := checkEncoding(o.Encoding); err != nil {
		return nil, fmt.Errorf("webhook %s: %w", rawURL, err)
	}
	o.Header = o.Header.Clone()
	w := &Webhook{url: rawURL, client: o.Client, opts: o}
	if w.client == nil {
		w.client = &http.Client{Transport: webhookTransport}
	}
	if w.opts.Timeout == 0 {
		w.opts.Timeout = DefaultTimeout
	}
	return w, nil
}

// URL returns the URL the webhook posts to.
func (w *Webhook) URL() string { return w.url }

// Deliver posts e and reports the answer; see Webhook.
func (w *Webhook) Deliver(ctx context.Context, e Effect) error {
	ik := e.IdempotencyKey()
	body, err := e.json(w.opts.Encoding, ik)
	if err != nil {
		return newError("webhook", w.url, e, true, err)
	}
	if w.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.opts.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return newError("webhook", w.url, e, true, err)
	}
	for name, values := range w.opts.Header {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", ik)
	resp, err := w.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && w.opts.Timeout > 0 {
			err = fmt.Errorf("no answer within the webhook's timeout (%s): %w", w.opts.Timeout, err)
		}
		return newError("webhook", w.url, e, false, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, snippetMax+1))
	_, _ = io.CopyN(io.Discard, resp.Body, drainMax)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	de := newError("webhook", w.url, e, !retryableStatus(resp.StatusCode),
		fmt.Errorf("response body %s", quoteSnippet(snippet)))
	de.Status = resp.StatusCode
	return de
}

// retryableStatus reports whether an HTTP answer other than 2xx may succeed
// when tried again: 408 Request Timeout, 429 Too Many Requests and 5xx.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// quoteSnippet quotes at most snippetMax bytes of a response body, with "…"
// when the body is longer.
func quoteSnippet(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	more := len(b) > snippetMax
	if more {
		b = b[:snippetMax]
	}
	s := strconv.Quote(string(b))
	if more {
		s += "…"
	}
	return s
}

func checkEncoding(enc Encoding) error {
	if enc != Plain && enc != DynamoDBJSON {
		return fmt.Errorf("unknown encoding %d: want deliver.Plain or deliver.DynamoDBJSON", int(enc))
	}
	return nil
}
