// Package admin is the host's operations HTTP server: Prometheus metrics at
// /metrics, liveness at /healthz, readiness at /readyz and a small status
// page at / (this worker's counters, the fleet of workers and shards from
// the lease table, the plugin serving each projection and its hot swaps,
// the shards this worker reads, the last records given up and whether they
// were replayed). It listens on a loopback address unless told
// otherwise: reading needs no authentication, and the endpoints that
// change state (POST /projections/{name}/pause and /resume) answer only
// the configured bearer token.
//
//	m := telemetry.New(telemetry.Options{})
//	var started atomic.Bool // stored true once host.New has returned
//	// ready once the host is built and the reader has done a lease round
//	ready := admin.ReadyAfterLeaseRound(m, started.Load, true)
//	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:9100", Metrics: m, Ready: ready})
//	defer srv.Close()
//
// Example_service wires a host, its change-feed reader (host/sidecar), the
// metrics (host/telemetry) and this server together as a service does.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
)

// ErrNonLoopback is matched by the error of Start when Options.Addr is not
// a loopback address and Options.AllowNonLoopback is not set.
var ErrNonLoopback = errors.New("admin address is not a loopback address")

// ErrNotReady is what a readiness function returns (wrapped) while the
// host is not ready to serve; /readyz answers 503 with its text.
var ErrNotReady = errors.New("not ready")

// Options configures Start.
type Options struct {
	// Addr is the address to listen on, such as "127.0.0.1:9100" (":0"
	// style ports pick a free one). Required.
	Addr string
	// AllowNonLoopback lets Addr be a non-loopback address. Anyone who
	// can reach it then reads the metrics and the status page.
	AllowNonLoopback bool
	// AllowFlag names the setting that sets AllowNonLoopback, for the
	// error that refuses a non-loopback address (default
	// "admin.allowNonLoopback").
	AllowFlag string
	// Hosts lists the names (or addresses) the server answers besides
	// the loopback names (localhost, 127.0.0.1, [::1]) and the address a
	// request arrives on: the Host a client sends must be one of them,
	// with or without a port, else the answer is 421 Misdirected Request.
	// A web page cannot then read the server through a browser by giving
	// its own name this machine's address (DNS rebinding). List the names
	// a proxy or a scraper uses to reach the server.
	Hosts []string
	// HostsFlag is how the 421 answer tells the client to list a name, a
	// format with one %s for the name (default "Options.Hosts: [\"%s\"]").
	HostsFlag string
	// Metrics is what /metrics and the status page show. Required.
	Metrics *telemetry.Metrics
	// Ready reports whether the host is ready (nil error) for /readyz; nil
	// means ready as soon as the server runs.
	Ready func(ctx context.Context) error
	// Title heads the status page (default "dynafold").
	Title string
	// Worker is this process's worker id, marked in the fleet view.
	Worker string
	// Fleet, when set, reads the fleet view the status page shows (every
	// shard and worker of the lease table; Reader.Fleet).
	Fleet func(ctx context.Context) (sidecar.Fleet, error)
	// Replayed, when set, tells which of the recent failures' quarantine
	// entries are gone (replayed), by entry id; the page then says when
	// each was first seen replayed.
	Replayed func(ctx context.Context, fs []telemetry.Failure) (map[string]bool, error)
	// Logger logs the server's errors (default slog.Default()).
	Logger *slog.Logger
	// Token, when set, is the bearer token the endpoints that change state
	// (POST /projections/{name}/pause and /resume) require; without it
	// they answer 403 to everyone.
	Token string
	// Pause pauses and resumes projections across the fleet, for those
	// endpoints (nil: they answer 404).
	Pause PauseFunc
}

// Server is a running admin server.
type Server struct {
	ln  net.Listener
	srv *http.Server
	o   Options
}

// Start listens on o.Addr and serves until Close or ctx ends. A
// non-loopback address is refused with ErrNonLoopback unless
// o.AllowNonLoopback is set.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Addr == "" {
		return nil, errors.New("admin: no address: set one such as 127.0.0.1:9100")
	}
	if o.Metrics == nil {
		return nil, errors.New("admin: no metrics: pass the telemetry.Metrics the host reports to")
	}
	if o.AllowFlag == "" {
		o.AllowFlag = "Options.AllowNonLoopback"
	}
	if o.Title == "" {
		o.Title = "dynafold"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listening on %s: %w", o.Addr, err)
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		if !o.AllowNonLoopback {
			_ = ln.Close()
			return nil, fmt.Errorf("admin: %w: %q listens on %s; the admin server has no authentication, so listen on 127.0.0.1 or [::1], or allow it explicitly (%s)",
				ErrNonLoopback, o.Addr, ln.Addr(), o.AllowFlag)
		}
		o.Logger.Warn("admin: listening on a non-loopback address; anyone who can reach it reads the metrics and the status page", "addr", ln.Addr().String())
	}
	s := &Server{ln: ln, o: o}
	s.srv = &http.Server{Handler: Handler(o), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.Logger.Error("admin server stopped", "err", err.Error())
		}
	}()
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL, http://ADDR.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close stops the server, letting requests in flight finish for up to a
// second.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Handler returns the admin routes without a listener, for callers that
// mount them on a server of their own. Requests whose Host is not a
// loopback name, the address they arrived on or one of o.Hosts are
// answered 421 Misdirected Request.
func Handler(o Options) http.Handler {
	if o.Title == "" {
		o.Title = "dynafold"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HostsFlag == "" {
		o.HostsFlag = `Options.Hosts: ["%s"]`
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.Metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if o.Ready != nil {
			if err := o.Ready(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { statusPage(w, r, o) })
	controlRoutes(mux, o)
	return checkHost(o, mux)
}

// ReadyAfterLeaseRound is a readiness function for Options.Ready: ready
// once started reports true (the host is built) and, when leases is set
// (the reader shares shards through leases), once m has seen a lease round.
func ReadyAfterLeaseRound(m *telemetry.Metrics, started func() bool, leases bool) func(context.Context) error {
	return func(context.Context) error {
		if started != nil && !started() {
			return fmt.Errorf("%w: the host is still starting", ErrNotReady)
		}
		if leases && !m.LeaseRoundDone() {
			return fmt.Errorf("%w: no lease round done yet", ErrNotReady)
		}
		return nil
	}
}

// ReadyWhileLeasing is ReadyAfterLeaseRound that also stops being ready
// while no lease round has succeeded for longer than within (a reader that
// cannot reach its lease table, DynamoDB being down or throttling it, does
// no work; 3 lease durations is a fair bound): /readyz then answers 503
// with how long it has been, and answers 200 again after the next round.
// Liveness (/healthz) is not affected: restarting does not help.
func ReadyWhileLeasing(m *telemetry.Metrics, started func() bool, within time.Duration) func(context.Context) error {
	after := ReadyAfterLeaseRound(m, started, true)
	return func(ctx context.Context) error {
		if err := after(ctx); err != nil {
			return err
		}
		if last := m.LastLeaseRound(); within > 0 && time.Since(last) > within {
			return fmt.Errorf("%w: no lease round has succeeded for %s (is DynamoDB reachable, or throttling the lease table? the log says why)", ErrNotReady, time.Since(last).Round(time.Second))
		}
		return nil
	}
}

// StartConfig starts the server the configuration's admin section
// describes; it returns nil and no error when the section or its address
// is absent (the server is off unless configured).
//
// The options' Addr, AllowNonLoopback, Hosts and the settings the errors
// name come from c; set the others in base (Metrics, Ready, Logger, Fleet,
// ...).
func StartConfig(ctx context.Context, c *host.AdminConfig, base Options) (*Server, error) {
	if c == nil || c.Addr == "" {
		return nil, nil
	}
	base.Addr, base.AllowNonLoopback, base.AllowFlag = c.Addr, c.AllowNonLoopback, `"admin": {"allowNonLoopback": true}`
	base.Hosts, base.HostsFlag = c.Hosts, `"admin": {"hosts": ["%s"]} in the configuration`
	base.Token = c.Token
	return Start(ctx, base)
}
