package ddbclient

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"
)

// signer signs a Wire's requests with SigV4 as the SDK's v4.Signer signs
// them (the same canonical request, headers and signature, checked by
// newSigner against the SDK's at construction and by the tests), without
// its per-request work that a Wire's fixed requests do not need: the
// headers' map, their sorting and lower-casing, the strings joined on the
// way. The signing key is derived once per day, credentials, region and
// service, and kept. A request it cannot sign this way (a header value
// with spaces to strip, say) is signed by the SDK's signer.
type signer struct {
	region, service string
	uri             string // the canonical URI
	host            string // the Host header's value as the SDK signs and sends it
	setHost         bool   // the SDK rewrites req.Host to host (a default port dropped)
	ok              bool   // the lean path agrees with the SDK's signer
	key             atomic.Pointer[signingKey]
}

// signingKey is the derived key of one day, secret, region and service,
// kept as HMAC's two padded blocks.
type signingKey struct {
	akid, secret, date string
	scope              string // date/region/service/aws4_request
	ipad, opad         [sha256.BlockSize]byte
}

// newSigner returns the signer of requests to rawURL for service in region.
func newSigner(rawURL, service, region string) *signer {
	s := &signer{region: region, service: service}
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" || u.RawQuery != "" || u.User != nil || u.Host == "" || clean(u.Host) != u.Host {
		return s // every request through the SDK's signer
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	s.uri = httpbinding.EscapePath(path, false)
	s.host = u.Host
	if h, port, found := strings.Cut(u.Host, ":"); found && !strings.Contains(u.Host, "]") &&
		((strings.EqualFold(u.Scheme, "http") && port == "80") || (strings.EqualFold(u.Scheme, "https") && port == "443")) {
		s.host, s.setHost = h, true
	}
	if strings.Contains(u.Host, "]") && (strings.HasSuffix(u.Host, "]:80") || strings.HasSuffix(u.Host, "]:443")) {
		return s // the SDK strips an IPv6 literal's brackets with its port: leave that to it
	}
	s.ok = true
	return s
}

// clean returns v when the SDK puts it in the canonical request as it is
// (no spaces to trim, no runs of them to make one), else "": a value the
// lean signer leaves to the SDK's.
func clean(v string) string {
	if strings.TrimSpace(v) != v || strings.Contains(v, "  ") {
		return ""
	}
	return v
}

// signingKeyFor returns the key of creds on day (yyyymmdd), derived on
// its first use and kept until the date or the credentials change.
func (s *signer) signingKeyFor(creds *aws.Credentials, day []byte) *signingKey {
	if k := s.key.Load(); k != nil && k.date == string(day) && k.akid == creds.AccessKeyID && k.secret == creds.SecretAccessKey {
		return k
	}
	date := string(day)
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	kd := mac(mac(mac(mac([]byte("AWS4"+creds.SecretAccessKey), date), s.region), s.service), "aws4_request")
	k := &signingKey{akid: creds.AccessKeyID, secret: creds.SecretAccessKey, date: date,
		scope: date + "/" + s.region + "/" + s.service + "/aws4_request"}
	for i := range k.ipad {
		k.ipad[i], k.opad[i] = 0x36, 0x5c
	}
	for i, b := range kd {
		k.ipad[i] ^= b
		k.opad[i] ^= b
	}
	s.key.Store(k)
	return k
}

// signBufs are the scratch buffers of sign: the canonical request, then
// the string to sign after HMAC's inner block.
var signBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// sign signs req, whose headers are Content-Type, X-Amz-Target and
// Accept-Encoding only (as Wire.send sets them) and whose body has the
// hex SHA-256 payloadHash, at t; false when it leaves req to the SDK's
// signer (nothing changed).
func (s *signer) sign(req *http.Request, creds *aws.Credentials, payloadHash string, t time.Time) bool {
	if !s.ok {
		return false
	}
	h := req.Header
	ae, ct, target := one(h, "Accept-Encoding"), one(h, "Content-Type"), one(h, "X-Amz-Target")
	tok := creds.SessionToken
	if len(h) != 3 || ae == "" || ct == "" || target == "" || clean(ae) == "" || clean(ct) == "" || clean(target) == "" ||
		(tok != "" && clean(tok) == "") {
		return false
	}
	bp := signBufs.Get().(*[]byte)
	defer signBufs.Put(bp)
	var sg signature
	*bp = s.signature((*bp)[:0], &sg, ae, ct, target, "", req.ContentLength, creds, payloadHash, t)
	amzDate, k, names := sg.date[:sg.dateLen], sg.key, sg.names

	// One string holds X-Amz-Date's value and Authorization's.
	const alg = "AWS4-HMAC-SHA256 Credential="
	var v strings.Builder
	v.Grow(len(amzDate) + len(alg) + len(k.akid) + 1 + len(k.scope) + len(", SignedHeaders=") + len(names) + len(", Signature=") + 2*sha256.Size)
	v.Write(amzDate)
	v.WriteString(alg)
	v.WriteString(k.akid)
	v.WriteByte('/')
	v.WriteString(k.scope)
	v.WriteString(", SignedHeaders=")
	v.Write(names)
	v.WriteString(", Signature=")
	v.Write(sg.sig[:])
	all := v.String()
	vals := make([]string, 3)
	vals[0], vals[1] = all[:len(amzDate)], all[len(amzDate):]
	h["X-Amz-Date"] = vals[0:1:1]
	h["Authorization"] = vals[1:2:2]
	if tok != "" {
		vals[2] = tok
		h["X-Amz-Security-Token"] = vals[2:3:3]
	}
	if s.setHost {
		req.Host = s.host
	}
	return true
}

// appendSigned is sign for a request written by hand (Wire's own
// connections): it appends the X-Amz-Date, X-Amz-Security-Token (with a
// session token) and Authorization header lines, each ending in CRLF, of
// a request with these Accept-Encoding, Content-Type and X-Amz-Target
// (targetPrefix+op) values and a body of contentLength bytes, to dst;
// false (dst unchanged) when the lean signer cannot sign it.
func (s *signer) appendSigned(dst []byte, ae, ct, targetPrefix, op string, contentLength int64, creds *aws.Credentials, payloadHash string, t time.Time) ([]byte, bool) {
	tok := creds.SessionToken
	if !s.ok || clean(ae) == "" || clean(ct) == "" || clean(targetPrefix) == "" || op == "" || clean(op) == "" ||
		(tok != "" && clean(tok) == "") {
		return dst, false
	}
	bp := signBufs.Get().(*[]byte)
	defer signBufs.Put(bp)
	var sg signature
	*bp = s.signature((*bp)[:0], &sg, ae, ct, targetPrefix, op, contentLength, creds, payloadHash, t)
	dst = append(dst, "X-Amz-Date: "...)
	dst = append(dst, sg.date[:sg.dateLen]...)
	dst = append(dst, "\r\n"...)
	if tok != "" {
		dst = append(dst, "X-Amz-Security-Token: "...)
		dst = append(dst, tok...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "Authorization: AWS4-HMAC-SHA256 Credential="...)
	dst = append(dst, sg.key.akid...)
	dst = append(dst, '/')
	dst = append(dst, sg.key.scope...)
	dst = append(dst, ", SignedHeaders="...)
	dst = append(dst, sg.names...)
	dst = append(dst, ", Signature="...)
	dst = append(dst, sg.sig[:]...)
	dst = append(dst, "\r\n"...)
	return dst, true
}

// signature is what signature computes: X-Amz-Date's value, the key, the
// signed headers' names (in the scratch buffer) and the hex signature.
type signature struct {
	date    [16]byte
	dateLen int
	key     *signingKey
	names   []byte
	sig     [2 * sha256.Size]byte
}

// signature signs a request whose X-Amz-Target is target+op, using b as
// scratch (returned, grown), into sg.
func (s *signer) signature(b []byte, sg *signature, ae, ct, target, op string, contentLength int64, creds *aws.Credentials, payloadHash string, t time.Time) []byte {
	tok := creds.SessionToken
	t = t.UTC()
	amzDate := t.AppendFormat(sg.date[:0], "20060102T150405Z")
	sg.dateLen = len(amzDate)
	k := s.signingKeyFor(creds, amzDate[:8])
	sg.key = k
	// The canonical request: method, URI, query (none), headers in order,
	// the signed headers' names, the payload's hash.
	b = append(b, "POST\n"...)
	b = append(b, s.uri...)
	b = append(b, "\n\naccept-encoding:"...)
	b = append(b, ae...)
	if contentLength > 0 {
		b = append(b, "\ncontent-length:"...)
		b = strconv.AppendInt(b, contentLength, 10)
	}
	b = append(b, "\ncontent-type:"...)
	b = append(b, ct...)
	b = append(b, "\nhost:"...)
	b = append(b, s.host...)
	b = append(b, "\nx-amz-date:"...)
	b = append(b, amzDate...)
	if tok != "" {
		b = append(b, "\nx-amz-security-token:"...)
		b = append(b, tok...)
	}
	b = append(b, "\nx-amz-target:"...)
	b = append(b, target...)
	b = append(b, op...)
	b = append(b, "\n\n"...)
	signed := len(b)
	b = append(b, "accept-encoding;"...)
	if contentLength > 0 {
		b = append(b, "content-length;"...)
	}
	b = append(b, "content-type;host;x-amz-date;"...)
	if tok != "" {
		b = append(b, "x-amz-security-token;"...)
	}
	b = append(b, "x-amz-target"...)
	signedHeaders := len(b)
	b = append(b, '\n')
	b = append(b, payloadHash...)
	canonical := sha256.Sum256(b)
	// The header names go into the Authorization header: keep them where
	// they are, and put the string to sign, after HMAC's inner block,
	// behind them.
	inner := len(b)
	b = append(b, k.ipad[:]...)
	b = append(b, "AWS4-HMAC-SHA256\n"...)
	b = append(b, amzDate...)
	b = append(b, '\n')
	b = append(b, k.scope...)
	b = append(b, '\n')
	b = hex.AppendEncode(b, canonical[:])
	sg.names = b[signed:signedHeaders]
	innerSum := sha256.Sum256(b[inner:])
	var outer [sha256.BlockSize + sha256.Size]byte
	copy(outer[:], k.opad[:])
	copy(outer[sha256.BlockSize:], innerSum[:])
	sig := sha256.Sum256(outer[:])
	hex.Encode(sg.sig[:], sig[:])
	return b
}

// one returns the header's single value, or "" (none, or several).
func one(h http.Header, name string) string {
	if v := h[name]; len(v) == 1 {
		return v[0]
	}
	return ""
}

// signsAsTheSDK signs two sample requests of w's (with and without a
// session token) both ways and reports whether the lean signer's headers
// are the SDK's: a Wire whose are not signs with the SDK's.
func (w *Wire) signsAsTheSDK() bool {
	at := time.Date(2026, 12, 3, 11, 30, 0, 0, time.UTC)
	// A fresh SDK signer: its key cache keeps one key per access key id,
	// whatever the secret.
	sdk := v4.NewSigner()
	for _, creds := range []aws.Credentials{{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
		{AccessKeyID: "AKIDEXAMPLE2", SecretAccessKey: "secret", SessionToken: "token/with+chars="}} {
		a, b := w.sampleRequest(), w.sampleRequest()
		if a == nil || b == nil || !w.lean.sign(a, &creds, emptyHash, at) ||
			sdk.SignHTTP(context.Background(), creds, b, emptyHash, w.svc.signing, w.region, at) != nil ||
			!sameSigned(a, b) {
			return false
		}
		// and the header lines appendSigned writes for it
		got, ok := w.lean.appendSigned(nil, identity[0], w.svc.json[0], w.svc.target, "GetItem", 2, &creds, emptyHash, at)
		want := "X-Amz-Date: " + b.Header.Get("X-Amz-Date") + "\r\n"
		if creds.SessionToken != "" {
			want += "X-Amz-Security-Token: " + creds.SessionToken + "\r\n"
		}
		if !ok || string(got) != want+"Authorization: "+b.Header.Get("Authorization")+"\r\n" {
			return false
		}
	}
	return true
}

// emptyHash is the hex SHA-256 of no bytes.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func (w *Wire) sampleRequest() *http.Request {
	req, err := http.NewRequest(http.MethodPost, w.url, http.NoBody)
	if err != nil {
		return nil
	}
	req.ContentLength = 2
	req.Header["Content-Type"] = w.svc.json
	req.Header["X-Amz-Target"] = []string{w.svc.target + "GetItem"}
	req.Header["Accept-Encoding"] = identity
	return req
}

// sameSigned reports whether two requests carry the same headers and Host.
func sameSigned(a, b *http.Request) bool {
	if a.Host != b.Host || len(a.Header) != len(b.Header) {
		return false
	}
	for k, v := range a.Header {
		if strings.Join(v, "\x00") != strings.Join(b.Header[k], "\x00") {
			return false
		}
	}
	return true
}
