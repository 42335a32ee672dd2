package admin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/dynafold/dynafold/host"
)

// controlRoutes adds the endpoints that change state: pausing and resuming
// a projection across the fleet. They answer only a request that presents
// the configured token (Authorization: Bearer TOKEN, compared in constant
// time); without a token configured they are refused, whoever asks.
func controlRoutes(mux *http.ServeMux, o Options) {
	for _, action := range []string{"pause", "resume"} {
		paused := action == "pause"
		mux.HandleFunc("POST /projections/{name}/"+action, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if !authorized(w, r, o.Token) {
				return
			}
			if o.Pause == nil {
				http.Error(w, "this server has no fleet to "+action+" a projection in: only host run with a \"sidecar\" section serves it", http.StatusNotFound)
				return
			}
			name := r.PathValue("name")
			by := "admin API"
			if o.Worker != "" {
				by += " of worker " + o.Worker
			}
			err := o.Pause(r.Context(), name, paused, by, r.URL.Query().Get("reason"))
			switch {
			case errors.Is(err, host.ErrUnknownProjection):
				http.Error(w, err.Error(), http.StatusNotFound)
			case err != nil:
				o.Logger.Error("admin: "+action+" failed", "projection", name, "err", err.Error())
				http.Error(w, action+" failed: "+err.Error(), http.StatusInternalServerError)
			default:
				o.Logger.Warn("admin: projection "+action+"d", "projection", name, "by", by)
				fmt.Fprintf(w, "projection %s %sd across the fleet: every worker takes it at its next lease round\n", name, action)
			}
		})
	}
}

// authorized reports whether the request presents token as a bearer
// token; otherwise it answers 403 (no token configured: the endpoints are
// off) or 401.
func authorized(w http.ResponseWriter, r *http.Request, token string) bool {
	if token == "" {
		http.Error(w, "the admin server's endpoints that change state are off: set \"admin\": {\"token\": \"…\"} in the configuration and send Authorization: Bearer <token>, or use `host pause` / `host resume`, which write the lease table directly", http.StatusForbidden)
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="dynafold admin"`)
		http.Error(w, "unauthorized: send the configured admin token as Authorization: Bearer <token>", http.StatusUnauthorized)
		return false
	}
	return true
}

// PauseFunc pauses (paused) or resumes a projection across the fleet; by
// and reason are recorded with it. sidecar.SetPaused is one, bound to a
// configuration.
type PauseFunc func(ctx context.Context, projection string, paused bool, by, reason string) error
