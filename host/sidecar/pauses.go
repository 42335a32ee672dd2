package sidecar

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// Pauses returns each configured projection's pause state from the lease
// table's control items (whether it is paused, since when, by whom, the
// stream instances waiting), without listing the stream's shards as
// ReadFleet does: for a command that only needs to know what is paused.
func Pauses(ctx context.Context, cfg *host.Config, client *dynamodb.Client) ([]FleetProjection, error) {
	if cfg.Sidecar == nil {
		return nil, errors.New(`configuration: no "sidecar" section: no lease table records pauses`)
	}
	_, ctl, err := lease.NewTable(client, cfg.EffectiveSidecar().LeaseTable).ListAll(ctx)
	if err != nil {
		return nil, err
	}
	return projectionsOf(cfg, ctl, time.Now()), nil
}
