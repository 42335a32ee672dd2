package sidecar

import "github.com/dynafold/dynafold/internal/ddbclient"

// why is err as a log line shows it: a request no server answered says
// which endpoint and what to check (is ddblocal running?), in place of the
// SDK's retry summary.
func why(err error) error { return ddbclient.Explain(err) }
