package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// pausedSince returns, for each projection the run verifies that is paused
// across the fleet (host pause), when its pause began, and says so on w:
// the events it holds back are pending, not drift. Without a lease table,
// or when it cannot be read, nothing is paused as far as verify can tell.
func pausedSince(ctx context.Context, cfg *host.Config, projection string, w io.Writer) map[string]time.Time {
	if cfg.Sidecar == nil {
		return nil
	}
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return nil
	}
	ps, err := sidecar.Pauses(ctx, cfg, client)
	if err != nil {
		return nil
	}
	out := map[string]time.Time{}
	for _, p := range ps {
		if !p.Paused || (projection != "" && p.Name != projection) {
			continue
		}
		out[p.Name] = p.ChangedAt
		by := ""
		if p.By != "" {
			by = " by " + p.By
			if p.Reason != "" {
				by += " (" + p.Reason + ")"
			}
		}
		fmt.Fprintf(w, "projection %s is paused since %s%s: the events appended since are pending, not drift; `host resume --projection %s` catches them up\n",
			p.Name, p.ChangedAt.UTC().Format(time.RFC3339), by, p.Name)
	}
	return out
}
