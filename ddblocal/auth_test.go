package ddblocal

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestD1_SignedPartsNeverAcceptsWhatCheckAuthRefuses holds the fast path of
// checkAuth to its full reading: signedParts may pass a header on to the
// full reading, never accept one the full reading refuses (a part named
// twice goes to the full reading, where the last one counts).
func TestD1_SignedPartsNeverAcceptsWhatCheckAuthRefuses(t *testing.T) {
	for _, h := range []struct {
		auth       string
		fast, full bool // accepted by signedParts, by checkAuth
	}{
		{benchAuth, true, true},
		{"AWS4-HMAC-SHA256 Credential=a/b,SignedHeaders=host,Signature=ff", true, true},
		{"  AWS4-HMAC-SHA256   Credential=a  Signature=b SignedHeaders=c", true, true},
		{"AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host", false, false},
		{"AWS4-HMAC-SHA256 Credential=, SignedHeaders=host, Signature=ff", false, false},
		{"AWS4-HMAC-SHA256 Credential==a, SignedHeaders=host, Signature=ff", false, false},
		{"AWS4-HMAC-SHA256 XCredential=a, SignedHeaders=host, Signature=ff", false, false},
		{"AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host, Signature=ff, Credential=", false, false},
		{"AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host, Signature=ff Signature=", false, false},
		{"AWS4-HMAC-SHA256 Credential=a, SignedHeaders=host, Signature=", false, false},
		{"AWS4-HMAC-SHA256 Credential=a,SignedHeaders=host,Signature=ff=", true, true},
		{"AWS4-HMAC-SHA256 Credential=a, Credential=b, SignedHeaders=host, Signature=ff", false, true},
	} {
		if got := signedParts(h.auth); got != h.fast {
			t.Errorf("signedParts(%q) = %v, want %v", h.auth, got, h.fast)
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
		r.Header.Set("Authorization", h.auth)
		r.Header.Set("X-Amz-Date", "20260101T000000Z")
		err := checkAuth(authOf(r))
		if (err == nil) != h.full {
			t.Errorf("checkAuth(%q) = %v, want accepted %v", h.auth, err, h.full)
		}
	}
}
