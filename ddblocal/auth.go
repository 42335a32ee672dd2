package ddblocal

import (
	"net/http"
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
func checkAuth(r *http.Request) error {
	auth := r.Header.Get("Authorization")
	if r.URL.RawQuery == "" && strings.HasPrefix(strings.TrimSpace(auth), "AWS4-") && hasAuthPart(auth, "Credential") &&
		hasAuthPart(auth, "Signature") && hasAuthPart(auth, "SignedHeaders") && (r.Header.Get("X-Amz-Date") != "" || r.Header.Get("Date") != "") {
		return nil // a signed request, checked without allocating
	}
	q := r.URL.Query()
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
		if r.Header.Get("X-Amz-Date") == "" && r.Header.Get("Date") == "" {
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

// hasAuthPart reports whether an Authorization header, after its scheme,
// has a part name=value with a value (parts are separated by commas or
// spaces), without allocating.
func hasAuthPart(auth, name string) bool {
	first := true
	for len(auth) > 0 {
		i := strings.IndexAny(auth, ", ")
		tok := auth
		if i >= 0 {
			tok, auth = auth[:i], auth[i+1:]
		} else {
			auth = ""
		}
		if tok == "" {
			continue
		}
		if first { // the scheme
			first = false
			continue
		}
		k, v, _ := strings.Cut(tok, "=")
		if k == name {
			v, _, _ = strings.Cut(v, "=")
			return v != ""
		}
	}
	return false
}
