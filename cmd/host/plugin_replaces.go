package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// fleetReadTimeout bounds validate's look at the lease table: a fleet
// that cannot be read in that time (nothing running, no DynamoDB there)
// is left out of its output.
const fleetReadTimeout = 3 * time.Second

// replacesLine is validate's line naming what the candidate replaces: the
// module at the projection's plugin path, and, when the workers of the
// configuration's sidecar publish what they serve in the lease table (as
// `host status` shows it), the versions they serve, which may differ (a
// refused candidate copied over the file while the old version kept
// serving). With nothing published, the module on disk alone.
func replacesLine(ctx context.Context, cfg *host.Config, pc *host.ProjectionConfig, onDisk string) string {
	line := fmt.Sprintf("  replaces %s in projection %q", onDisk, pc.Name)
	serving := servingVersions(ctx, cfg, pc.Name)
	switch {
	case len(serving) == 0:
		return line
	case len(serving) == 1 && serving[0] == onDisk:
		return fmt.Sprintf("%s (the module at %s, which the workers serve)", line, pc.Plugin)
	}
	return fmt.Sprintf("%s (the module at %s; the workers serve %s)", line, pc.Plugin, strings.Join(serving, " and "))
}

// servingVersions returns the plugin versions the live workers of cfg's
// sidecar published for the projection, sorted; none when there is no
// sidecar section or the lease table cannot be read.
func servingVersions(ctx context.Context, cfg *host.Config, projection string) []string {
	if cfg.Sidecar == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, fleetReadTimeout)
	defer cancel()
	client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
	if err != nil {
		return nil
	}
	f, err := sidecar.ReadFleet(ctx, cfg, client, nil, sidecar.FleetOptions{})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, w := range f.Workers {
		if v := w.Plugins[projection]; w.Alive && v != "" {
			seen[v] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
