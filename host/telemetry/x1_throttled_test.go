package telemetry_test

import (
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
)

// throttlingOps is an OpsSource that is also a ThrottleSource, as
// *host.Host is (whose counting runs against ddblocal in host's tests).
type throttlingOps struct{ n map[string]int64 }

func (throttlingOps) Projections() []string                 { return nil }
func (throttlingOps) IsPaused(string) bool                  { return false }
func (throttlingOps) Breakers() []host.BreakerStatus        { return nil }
func (o throttlingOps) ThrottledRequests() map[string]int64 { return o.n }

// TestX1_ThrottledDynamoDBRequestsAreExported: the client's throttled
// attempts are a counter by operation, read at each scrape.
func TestX1_ThrottledDynamoDBRequestsAreExported(t *testing.T) {
	m := telemetry.New(telemetry.Options{})
	src := throttlingOps{n: map[string]int64{"PutItem": 3}}
	m.ServeOps(src)
	const name = "dynafold_dynamodb_throttled_requests_total"
	if v, ok := value(t, m, name, map[string]string{"operation": "PutItem"}); !ok || v != 3 {
		t.Errorf("%s{operation=PutItem} = %v (present %v), want 3", name, v, ok)
	}
	src.n["Query"] = 1
	if v, ok := value(t, m, name, map[string]string{"operation": "Query"}); !ok || v != 1 {
		t.Errorf("%s{operation=Query} = %v (present %v), want 1 at the next scrape", name, v, ok)
	}
}
