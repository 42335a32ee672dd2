package host

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// AdminConfig is the "admin" section: the operations HTTP server of a
// long-running host (host/admin): Prometheus metrics at /metrics, /healthz,
// /readyz and a status page at /. Without the section (or its addr) there
// is none.
//
//	"admin": {"addr": "127.0.0.1:9100"}
type AdminConfig struct {
	// Addr is the address to listen on, HOST:PORT. It must be a loopback
	// address (127.0.0.1, [::1], localhost) unless AllowNonLoopback is set.
	Addr string `json:"addr,omitempty"`
	// AllowNonLoopback lets Addr be any address: the server has no
	// authentication, so anyone who can reach it reads the metrics and
	// the status page.
	AllowNonLoopback bool `json:"allowNonLoopback,omitempty"`
	// Hosts lists the names (or addresses) clients may address the server
	// by besides localhost, 127.0.0.1, [::1] and the address a request
	// arrives on: a request whose Host header names anything else is
	// answered 421 Misdirected Request, so that a web page cannot read
	// the server through a browser by giving its own name this machine's
	// address. Ports are not compared.
	Hosts []string `json:"hosts,omitempty"`
	// Token, when set, is the bearer token the server's endpoints that
	// change state (pausing and resuming a projection) require, compared
	// in constant time; without it they are refused. Use a long random
	// value (openssl rand -hex 32); `host pause` needs none.
	Token string `json:"token,omitempty"`
}

// validateAdmin checks the admin section: an address of the form
// HOST:PORT. Whether it is a loopback address is checked when the server
// starts, where the name is resolved.
func (c *Config) validateAdmin(ps *problems) {
	a := c.Admin
	if a == nil || a.Addr == "" {
		return
	}
	_, port, err := net.SplitHostPort(a.Addr)
	if err != nil {
		ps.add("admin.addr", "%q is not HOST:PORT: use an address such as \"127.0.0.1:9100\"", a.Addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps.add("admin.addr", "%q has no valid port: use an address such as \"127.0.0.1:9100\"", a.Addr)
	}
	for i, h := range a.Hosts {
		if h == "" || strings.ContainsAny(h, "/ @?#") {
			ps.add(fmt.Sprintf("admin.hosts[%d]", i), "%q is not a host name: write the name or address clients use, such as \"dynafold.internal\" or \"10.0.0.5\" (no scheme, no path)", h)
		}
	}
}
