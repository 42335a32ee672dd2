package ddblocal

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// checkAuth refuses a request that carries no AWS Signature Version 4
// authentication, with DynamoDB's exceptions and words: no Authorization
// header (nor X-Amz-Algorithm query parameter), or one not of the AWS4-
// scheme, is a MissingAuthenticationTokenException; a signature missing
// one of its parts an IncompleteSignatureException; both header and query
// an InvalidSignatureException. Like DynamoDB Local, ddblocal accepts any
// credentials and does not verify the signature itself.
func checkAuth(a authHeaders) error {
	auth := a.authorization
	if a.rawQuery == "" && strings.HasPrefix(strings.TrimSpace(auth), "AWS4-") && signedParts(auth) &&
		(a.amzDate != "" || a.date != "") {
		return nil // a signed request, checked in one pass without allocating
	}
	q, _ := url.ParseQuery(a.rawQuery)
	_, byQuery := q["X-Amz-Algorithm"]
	if auth != "" && byQuery {
		return apierr.New("InvalidSignatureException", 400, "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.")
	}
	if (auth == "" && !byQuery) || (auth != "" && !strings.HasPrefix(strings.TrimSpace(auth), "AWS4-")) {
		return apierr.New("MissingAuthenticationTokenException", 400, "Request is missing Authentication Token")
	}
	var msg strings.Builder
	if auth != "" {
		parts := map[string]string{}
		fields := strings.FieldsFunc(auth, func(r rune) bool { return r == ',' || r == ' ' })
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			v, _, _ = strings.Cut(v, "=")
			parts[k] = v
		}
		for _, p := range []string{"Credential", "Signature", "SignedHeaders"} {
			if parts[p] == "" {
				msg.WriteString("Authorization header requires '" + p + "' parameter. ")
			}
		}
		if a.amzDate == "" && a.date == "" {
			msg.WriteString("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ")
		}
		if msg.Len() > 0 {
			msg.WriteString("Authorization=" + auth)
		}
	} else {
		for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date"} {
			if q.Get(p) == "" {
				msg.WriteString("AWS query-string parameters must include '" + p + "'. ")
			}
		}
		if msg.Len() > 0 {
			msg.WriteString("Re-examine the query-string parameters.")
		}
	}
	if msg.Len() > 0 {
		return apierr.New("IncompleteSignatureException", 400, "%s", msg.String())
	}
	return nil
}

// authHeaders is what checkAuth reads of a request: its Authorization,
// X-Amz-Date and Date headers (the first of each) and its raw query.
type authHeaders struct {
	authorization, amzDate, date, rawQuery string
}

// authOf returns what checkAuth reads of r.
func authOf(r *http.Request) authHeaders {
	return authHeaders{authorization: r.Header.Get("Authorization"), amzDate: r.Header.Get("X-Amz-Date"),
		date: r.Header.Get("Date"), rawQuery: r.URL.RawQuery}
}

// signedParts reports whether an Authorization header, after its scheme,
// has Credential, Signature and SignedHeaders parts with values (parts
// are name=value, separated by commas or spaces), without allocating. It
// may answer false for a header checkAuth's full reading accepts (a part
// named twice, say); never true for one it refuses.
func signedParts(auth string) bool {
	return signedPart(auth, "Credential=") && signedPart(auth, "Signature=") && signedPart(auth, "SignedHeaders=")
}

// signedPart reports whether key (name and '=') starts a part of auth, once
// only, with a value.
func signedPart(auth, key string) bool {
	i := strings.Index(auth, key)
	if i <= 0 || (auth[i-1] != ',' && auth[i-1] != ' ') {
		return false
	}
	rest := auth[i+len(key):]
	if rest == "" || rest[0] == ',' || rest[0] == ' ' || rest[0] == '=' {
		return false
	}
	return !strings.Contains(rest, key)
}
