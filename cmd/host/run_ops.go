package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// runOps is what `host run` serves besides the reader: the metrics it
// observes and, when an address is configured, the admin server.
type runOps struct {
	metrics *telemetry.Metrics
	server  *admin.Server
	started atomic.Bool
	reader  atomic.Pointer[sidecar.Reader] // once built

	mu      sync.Mutex
	stageIs string // what the start is doing, for the log of a stop during it
	waiting error  // why the endpoint cannot be reached, while retrying at start
}

// runStage, when set (by tests), is called as `host run` enters each stage
// of its start ("checking the tables", "loading the plugins", "reading").
var runStage func(stage string)

func (o *runOps) setStage(s string) {
	o.mu.Lock()
	o.stageIs = s
	o.mu.Unlock()
	if runStage != nil {
		runStage(s)
	}
}

func (o *runOps) stage() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stageIs
}

// setWaiting records why the start waits for the endpoint (nil: it does
// not), for /readyz.
func (o *runOps) setWaiting(err error) {
	o.mu.Lock()
	o.waiting = err
	o.mu.Unlock()
}

// ready is /readyz: not ready while the start waits for the endpoint, then
// as admin.ReadyWhileLeasing with 3 lease durations (leases 0: without
// leases, as admin.ReadyAfterLeaseRound).
func (o *runOps) ready(leases time.Duration) func(context.Context) error {
	after := admin.ReadyAfterLeaseRound(o.metrics, o.started.Load, false)
	if leases > 0 {
		after = admin.ReadyWhileLeasing(o.metrics, o.started.Load, 3*leases)
	}
	return func(ctx context.Context) error {
		o.mu.Lock()
		w := o.waiting
		o.mu.Unlock()
		if w != nil {
			return fmt.Errorf("%w: the DynamoDB endpoint cannot be reached yet: %v", admin.ErrNotReady, w)
		}
		return after(ctx)
	}
}

// startOps starts the admin server when the configuration or addr (the
// --admin-addr flag, which wins) names an address. The metrics are kept
// either way: the reader reports to them and they cost little.
func startOps(ctx context.Context, cfg *host.Config, addr string, log *slog.Logger) (*runOps, error) {
	o := &runOps{metrics: telemetry.New(telemetry.Options{Objectives: cfg.Objectives()})}
	ac := cfg.Admin
	if addr != "" {
		c := host.AdminConfig{Addr: addr}
		if ac != nil {
			c.AllowNonLoopback, c.Hosts, c.Token = ac.AllowNonLoopback, ac.Hosts, ac.Token
		}
		ac = &c
	}
	var leases time.Duration
	if cfg.Sidecar != nil {
		leases = time.Duration(cfg.EffectiveSidecar().LeaseDuration)
	}
	base := admin.Options{Metrics: o.metrics, Ready: o.ready(leases), Logger: log, Replayed: replayedIn(cfg)}
	if cfg.Sidecar != nil {
		base.Worker, base.Fleet = cfg.EffectiveSidecar().WorkerID, o.fleet
		base.Pause = func(ctx context.Context, projection string, paused bool, by, reason string) error {
			return sidecar.SetPaused(ctx, cfg, nil, projection, paused, by, reason)
		}
	}
	srv, err := admin.StartConfig(ctx, ac, base)
	if err != nil {
		return nil, fmt.Errorf("admin server: %w", err)
	}
	o.server = srv
	if srv != nil {
		log.Info("admin server listening", "url", srv.URL(), "metrics", srv.URL()+"/metrics")
	}
	return o, nil
}

// serving marks the host built and its plugins known to the status page.
func (o *runOps) serving(h *host.Host) {
	o.metrics.ServePlugins(h)
	o.metrics.ServeSwaps(h)
	o.metrics.ServeShadows(h)
	o.metrics.ServeOps(h)
	o.started.Store(true)
}

// close stops the admin server.
func (o *runOps) close() {
	if o.server != nil {
		_ = o.server.Close()
	}
}

// destinations builds the on-failure destinations a configuration names:
// a JSON-lines file, a DynamoDB quarantine table (the one `host quarantine`
// lists and replays) or an SQS queue.
func destinations(cfg *host.Config) sidecar.DestinationFunc {
	return func(ctx context.Context, projection string, c host.OnFailureConfig) (quarantine.Destination, error) {
		region := cfg.Effective().Region
		switch {
		case c.File != "":
			return quarantine.NewFile(c.File), nil
		case c.Table != "":
			client, err := ddbclient.NewClient(ctx, cfg.Endpoint, region)
			if err != nil {
				return nil, err
			}
			return quarantine.NewTable(client, c.Table)
		case c.QueueURL != "":
			var loads []func(*config.LoadOptions) error
			if region != "" {
				loads = append(loads, config.WithRegion(region))
			}
			ac, err := config.LoadDefaultConfig(ctx, loads...)
			if err != nil {
				return nil, fmt.Errorf("quarantine queue: load AWS config: %w", err)
			}
			return quarantine.NewSQS(sqs.NewFromConfig(ac), c.QueueURL)
		}
		return nil, fmt.Errorf("onFailure names no destination: set file, table or queueUrl")
	}
}

// fleet is the status page's fleet view, read through the reader, with
// each shard's lag read as host status reads it.
func (o *runOps) fleet(ctx context.Context) (sidecar.Fleet, error) {
	r := o.reader.Load()
	if r == nil {
		return sidecar.Fleet{}, errors.New("the change-feed reader is not started yet")
	}
	return r.Fleet(ctx, sidecar.FleetOptions{Lag: true})
}

// replayedIn tells the status page which recent failures were replayed: the
// ones sent to a quarantine table (the projection's onFailure.table) whose
// entry is gone. Nil without a sidecar section.
func replayedIn(cfg *host.Config) func(context.Context, []telemetry.Failure) (map[string]bool, error) {
	if cfg.Sidecar == nil {
		return nil
	}
	sc := cfg.EffectiveSidecar()
	var mu sync.Mutex
	tables := map[string]*quarantine.Table{}
	return func(ctx context.Context, fs []telemetry.Failure) (map[string]bool, error) {
		byTable := map[string][]string{}
		for _, f := range fs {
			if of := sc.Policy(f.Projection).OnFailure; of != nil && of.Table != "" && f.EntryID != "" && f.Replayed.IsZero() {
				byTable[of.Table] = append(byTable[of.Table], f.EntryID)
			}
		}
		gone := map[string]bool{}
		for name, ids := range byTable {
			mu.Lock()
			t := tables[name]
			if t == nil {
				client, err := ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Effective().Region)
				if err != nil {
					mu.Unlock()
					return nil, err
				}
				if t, err = quarantine.NewTable(client, name); err != nil {
					mu.Unlock()
					return nil, err
				}
				tables[name] = t
			}
			mu.Unlock()
			g, err := t.Gone(ctx, ids)
			if err != nil {
				return nil, err
			}
			for id := range g {
				gone[id] = true
			}
		}
		return gone, nil
	}
}
