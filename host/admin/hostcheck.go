package admin

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

// loopbackNames are the Host names every admin server answers: no web page
// can own them, so a browser sending them is talking to this machine on
// its own behalf.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// hostName returns the name part of a Host header ("example:9100" →
// "example", "[::1]:9100" and "[::1]" → "::1"), lower-cased.
func hostName(h string) string {
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return strings.ToLower(h)
}

// hostAllowed reports whether a request's Host names this server: a
// loopback name, the address the request arrived on (local; nil when
// unknown), or one of names (host names or addresses, ports ignored), with
// or without a port. An empty Host (an HTTP/1.0 client) is allowed: every
// browser sends one.
func hostAllowed(host string, local net.Addr, names []string) bool {
	if host == "" {
		return true
	}
	name := hostName(host)
	for _, n := range loopbackNames {
		if name == n {
			return true
		}
	}
	for _, n := range names {
		if name == hostName(n) {
			return true
		}
	}
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return false
	}
	if tcp, ok := local.(*net.TCPAddr); ok {
		if own, ok := netip.AddrFromSlice(tcp.IP); ok && own.Unmap() == ip.WithZone("").Unmap() {
			return true
		}
	}
	return false
}

// checkHost answers 421 Misdirected Request to a request whose Host does
// not name this server (hostAllowed), so that a web page whose own name
// resolves to this machine (DNS rebinding) cannot read the metrics or the
// status page through a visitor's browser. The first refusal and then at
// most one a minute are logged.
func checkHost(o Options, next http.Handler) http.Handler {
	var lastLog atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if hostAllowed(r.Host, local, o.Hosts) {
			next.ServeHTTP(w, r)
			return
		}
		own := "localhost, 127.0.0.1, [::1]"
		if tcp, ok := local.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
			own += ", " + tcp.IP.String()
		}
		if len(o.Hosts) > 0 {
			own += ", " + strings.Join(o.Hosts, ", ")
		}
		name := hostName(r.Host)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusMisdirectedRequest)
		fmt.Fprintf(w, "misdirected request: this admin server answers requests addressed to %s, not to %q.\n"+
			"A web page can give its own name this machine's address and have a browser read what this server shows;\n"+
			"names not listed are refused for that reason. To reach the server under that name, list it: %s.\n",
			own, r.Host, fmt.Sprintf(o.HostsFlag, name))
		now := time.Now().UnixNano()
		if last := lastLog.Load(); (last == 0 || now-last >= int64(time.Minute)) && lastLog.CompareAndSwap(last, now) {
			o.Logger.Warn("admin: refused a request addressed to a name the server does not answer (421); list the name in the configuration if it is yours",
				"host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr, "setting", fmt.Sprintf(o.HostsFlag, name))
		}
	})
}
