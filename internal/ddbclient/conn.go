package ddbclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/dynafold/dynafold/internal/sockpeek"
)

// ownConns are a Wire's own kept HTTP/1.1 connections to its endpoint,
// on which each request is one synchronous exchange: the request written
// in one write, the answer read back on the caller's goroutine. It saves
// net/http's per-request work (the request and header maps, the hand-off
// to each connection's reading and writing goroutines and back, the
// answer's header map) and keeps what a Wire needs of it: the
// transport's dialer, TLS settings and handshake timeout, its limits on
// idle connections, their idle timeout and connections per host, and a
// bound on an answer's header bytes.
type ownConns struct {
	addr       string // host:port dialed
	host       string // the Host header
	uri        string // the request's path
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	tls        *tls.Config // nil for http
	tlsTimeout time.Duration
	maxIdle    int
	maxConns   int           // 0: no limit
	idleFor    time.Duration // 0: kept until closed
	maxHeader  int64

	mu    sync.Mutex
	idle  []*ownConn    // oldest first; the newest is taken first
	total int           // open connections, idle or in use
	wake  chan struct{} // closed when a connection goes idle or closes, for a request waiting for one
	sweep *time.Timer   // closes the connections idle longer than idleFor

	dials atomic.Int64 // connections dialed
}

// ownConn is one connection of ownConns.
type ownConn struct {
	c        net.Conn // a *tls.Conn for https
	br       *bufio.Reader
	lr       io.LimitedReader // an answer's body of known length
	raw      syscall.RawConn  // the socket, to peek at while idle; nil when the dialer's conn has none
	peek     func(fd uintptr) bool
	peekN    int
	peekErr  syscall.Errno
	idleAt   time.Time
	deadline bool // a deadline is set on c
	reused   bool // it served a request before this one
}

// defaultMaxHeader bounds an answer's status line and headers when the
// transport sets no MaxResponseHeaderBytes.
const defaultMaxHeader = 1 << 20

// newOwnConns returns the connections a Wire to rawURL with client and
// signer s sends its requests on, or nil when net/http must send them:
// see Wire for which clients take which path.
func newOwnConns(rawURL string, client aws.HTTPClient, s *signer) *ownConns {
	bc, ok := client.(*awshttp.BuildableClient)
	if !ok || !s.ok || bc.GetTimeout() > 0 {
		return nil
	}
	if rt, ok := bc.GetReadTimeout(); ok && rt > 0 {
		return nil
	}
	tr := bc.GetTransport()
	if tr.DisableKeepAlives || tr.DialTLSContext != nil || tr.DialTLS != nil || tr.ResponseHeaderTimeout > 0 { //nolint:staticcheck // DialTLS: a caller may still set it
		return nil
	}
	if tr.Protocols != nil && !tr.Protocols.HTTP1() {
		return nil // HTTP/2 only: net/http's
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	if tr.Proxy != nil {
		req := &http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}, Host: u.Host}
		if p, err := tr.Proxy(req); err != nil || p != nil {
			return nil
		}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p := &ownConns{addr: net.JoinHostPort(u.Hostname(), port), host: s.host, uri: s.uri,
		tlsTimeout: tr.TLSHandshakeTimeout, maxConns: tr.MaxConnsPerHost, idleFor: tr.IdleConnTimeout,
		maxIdle: tr.MaxIdleConnsPerHost, maxHeader: tr.MaxResponseHeaderBytes}
	if p.maxIdle <= 0 {
		p.maxIdle = http.DefaultMaxIdleConnsPerHost
	}
	if tr.MaxIdleConns > 0 && tr.MaxIdleConns < p.maxIdle {
		p.maxIdle = tr.MaxIdleConns
	}
	if p.maxHeader <= 0 {
		p.maxHeader = defaultMaxHeader
	}
	switch {
	case tr.DialContext != nil:
		p.dial = tr.DialContext
	case tr.Dial != nil: //nolint:staticcheck // a caller may still set it
		dial := tr.Dial //nolint:staticcheck
		p.dial = func(_ context.Context, network, addr string) (net.Conn, error) { return dial(network, addr) }
	default:
		p.dial = bc.GetDialer().DialContext
	}
	if u.Scheme == "https" {
		if tr.TLSClientConfig != nil {
			p.tls = tr.TLSClientConfig.Clone()
		} else {
			p.tls = &tls.Config{}
		}
		if p.tls.ServerName == "" {
			p.tls.ServerName = u.Hostname()
		}
		p.tls.NextProtos = []string{"http/1.1"}
	}
	return p
}

// get returns an idle connection that is still open (the newest first),
// or a new one (fresh: always a new one); with MaxConnsPerHost open, it
// waits for one to go idle or close.
func (p *ownConns) get(ctx context.Context, fresh bool) (*ownConn, error) {
	for {
		p.mu.Lock()
		for !fresh && len(p.idle) > 0 {
			c := p.idle[len(p.idle)-1]
			p.idle[len(p.idle)-1] = nil
			p.idle = p.idle[:len(p.idle)-1]
			p.mu.Unlock()
			if c.open() {
				c.reused = true
				return c, nil
			}
			p.closeConn(c)
			p.mu.Lock()
		}
		if p.maxConns <= 0 || p.total < p.maxConns {
			p.total++
			p.mu.Unlock()
			c, err := p.dialConn(ctx)
			if err != nil {
				p.mu.Lock()
				p.total--
				p.notify()
				p.mu.Unlock()
				return nil, err
			}
			return c, nil
		}
		if p.wake == nil {
			p.wake = make(chan struct{})
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		fresh = false
	}
}

// notify wakes the requests waiting for a connection; p.mu is held.
func (p *ownConns) notify() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}

// put keeps c idle for the next request, or closes it when maxIdle are.
func (p *ownConns) put(c *ownConn) {
	p.mu.Lock()
	if len(p.idle) >= p.maxIdle {
		p.mu.Unlock()
		p.closeConn(c)
		return
	}
	if p.idleFor > 0 {
		c.idleAt = time.Now()
		if p.sweep == nil {
			p.sweep = time.AfterFunc(p.idleFor, p.closeExpired)
		}
	}
	p.idle = append(p.idle, c)
	p.notify()
	p.mu.Unlock()
}

// closeConn closes c, which is not idle.
func (p *ownConns) closeConn(c *ownConn) {
	_ = c.c.Close()
	p.mu.Lock()
	p.total--
	p.notify()
	p.mu.Unlock()
}

// closeExpired closes the connections idle for idleFor or longer and
// sets the sweep for the next to expire.
func (p *ownConns) closeExpired() {
	now := time.Now()
	p.mu.Lock()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleAt) >= p.idleFor {
		n++
	}
	expired := append([]*ownConn(nil), p.idle[:n]...)
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	p.total -= n
	if len(p.idle) > 0 {
		p.sweep.Reset(p.idle[0].idleAt.Add(p.idleFor).Sub(now))
	} else {
		p.sweep = nil
	}
	if n > 0 {
		p.notify()
	}
	p.mu.Unlock()
	for _, c := range expired {
		_ = c.c.Close()
	}
}

// closeIdle closes every idle connection.
func (p *ownConns) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.total -= len(idle)
	p.notify()
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.c.Close()
	}
}

// idleCount returns the idle connections.
func (p *ownConns) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// dialConn opens a connection: the transport's dialer, then for https a
// TLS handshake within the transport's TLSHandshakeTimeout.
func (p *ownConns) dialConn(ctx context.Context) (*ownConn, error) {
	nc, err := p.dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	p.dials.Add(1)
	c := &ownConn{}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	if p.tls != nil {
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if p.tlsTimeout > 0 {
			hctx, cancel = context.WithTimeout(ctx, p.tlsTimeout)
		}
		tc := tls.Client(nc, p.tls)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
		nc = tc
	}
	c.c = nc
	c.br = bufio.NewReaderSize(nc, 4096)
	c.peek = func(fd uintptr) bool {
		c.peekN, c.peekErr = sockpeek.Peek(fd)
		return true
	}
	return c, nil
}

// open reports whether an idle connection is still open: nothing to
// read on its socket, without waiting. An end of stream (the server
// closed it) or any byte the server sent unasked (for TLS, an alert)
// means it is not.
func (c *ownConn) open() bool {
	if c.raw == nil {
		return true
	}
	if err := c.raw.Read(c.peek); err != nil {
		return false
	}
	if c.peekN < 0 && c.peekErr == 0 {
		return true // no way to peek here
	}
	return c.peekErr == syscall.EAGAIN || c.peekErr == syscall.EWOULDBLOCK
}
