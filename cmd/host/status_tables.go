package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// statusTables checks that every table the configuration names exists,
// as `host run` does at its start: a read-model, outbox or quarantine
// table deleted under running workers fails every record that writes to
// it, which the lease table alone does not show. The event table's
// absence, when the fleet view already names it (the stream could not be
// listed), is not named twice; the check shares status's client. It returns the tables missing (nil when
// none), or the error of a check that could not be made.
func statusTables(ctx context.Context, cfg *host.Config, client *dynamodb.Client, f sidecar.Fleet) (*host.TablesError, error) {
	es, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClient(client))
	if err != nil {
		return nil, err
	}
	defer es.Close(context.WithoutCancel(ctx))
	err = es.CheckTables(ctx)
	var te *host.TablesError
	if err == nil || !errors.As(err, &te) {
		if err != nil {
			err = fmt.Errorf("checking the configuration's tables: %w", err)
		}
		return nil, err
	}
	var known *host.TablesError
	if errors.As(f.StreamErr, &known) {
		te = &host.TablesError{Problems: slices.DeleteFunc(slices.Clone(te.Problems), func(p host.TableProblem) bool {
			return slices.Contains(known.Problems, p)
		})}
	}
	if len(te.Problems) == 0 {
		return nil, nil
	}
	return te, nil
}
