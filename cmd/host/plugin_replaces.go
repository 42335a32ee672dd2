package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/swap"
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
// serving). With nothing published, the module on disk alone. When the
// module at the plugin path does not load, cur is the archive's last
// accepted version (archivedCurrent), and the line says so.
func replacesLine(ctx context.Context, cfg *host.Config, pc *host.ProjectionConfig, cur transport.Plugin) string {
	line := fmt.Sprintf("  replaces %s in projection %q", cur.Name(), pc.Name)
	serving := servingVersions(ctx, cfg, pc.Name)
	if a, ok := cur.(archivedPlugin); ok {
		line = fmt.Sprintf("%s, the archive's last accepted version (%s, the module at %s does not load: %s", line, a.file, pc.Plugin, a.why)
		if len(serving) > 0 {
			line += "; the workers serve " + strings.Join(serving, " and ")
		}
		return line + ")"
	}
	switch {
	case len(serving) == 0:
		return line
	case len(serving) == 1 && serving[0] == cur.Name():
		return fmt.Sprintf("%s (the module at %s, which the workers serve)", line, pc.Plugin)
	}
	return fmt.Sprintf("%s (the module at %s; the workers serve %s)", line, pc.Plugin, strings.Join(serving, " and "))
}

// archivedPlugin is the archive's last accepted version standing in for a
// projection's plugin file that does not load.
type archivedPlugin struct {
	transport.Plugin
	file string // the archived module
	why  string // why the plugin file does not load
}

// archivedCurrent is what validate compares a candidate with when the
// projection's plugin file does not load (loadErr): as `host run` serves
// at a start, the newest module of the projection's hot-swap archive that
// loads. Without one, the error is loadErr, saying what to do.
func archivedCurrent(ctx context.Context, cfgPath string, pc *host.ProjectionConfig, loadErr error) (transport.Plugin, error) {
	file := relTo(filepath.Dir(cfgPath), pc.Plugin)
	why := strings.TrimPrefix(loadErr.Error(), "plugin "+file+": ")
	fail := func(reason string) (transport.Plugin, error) {
		fix := fmt.Sprintf("put a module that loads back at %s (a build of the version the workers serve)", pc.Plugin)
		if hs := pc.HotSwap; hs != nil && hs.S3 != nil {
			fix += fmt.Sprintf(", or the previous version back with `host plugin rollback --s3 s3://%s/%s`", hs.S3.Bucket, hs.S3.Key)
		}
		return nil, fmt.Errorf("projection %q's current plugin: %w; a running host keeps serving the version it loaded, but the candidate cannot be checked against it: %s; %s, then validate again",
			pc.Name, loadErr, reason, fix)
	}
	if pc.HotSwap == nil || pc.HotSwap.Archive == "" {
		return fail("hotSwap.archive is not set, so no accepted version is kept to check it against instead")
	}
	dir := relTo(filepath.Dir(cfgPath), pc.HotSwap.Archive)
	mods, err := swap.ArchivedModules(dir)
	if err != nil {
		return fail(fmt.Sprintf("the archive %s cannot be read (%v)", dir, err))
	}
	for _, m := range mods {
		if cur, _, err := transport.LoadFile(ctx, m, plugin.Config{PoolSize: 1}); err == nil {
			return archivedPlugin{Plugin: cur, file: filepath.Join(pc.HotSwap.Archive, filepath.Base(m)), why: why}, nil
		}
	}
	if len(mods) == 0 {
		return fail(fmt.Sprintf("the archive %s holds no accepted version yet", dir))
	}
	return fail(fmt.Sprintf("no module in the archive %s loads either", dir))
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
