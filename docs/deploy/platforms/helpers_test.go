package platforms

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
)

// adminHandler is the admin server host run starts, before its first lease
// round (not ready yet).
func adminHandler(t *testing.T) http.Handler {
	t.Helper()
	m := telemetry.New(telemetry.Options{})
	return admin.Handler(admin.Options{Metrics: m, Ready: admin.ReadyAfterLeaseRound(m, nil, true)})
}

// TestX6_RolesCarryTheSidecarPolicy: the Kubernetes service account and
// the ECS task name one role, and the deployment guide attaches
// iam/sidecar.json to it (which the main module's tests check against
// every call the sidecar makes).
func TestX6_RolesCarryTheSidecarPolicy(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "aws iam put-role-policy --role-name " + sidecarRole + " --policy-name dynafold-sidecar --policy-document file://docs/deploy/iam/sidecar.json"
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/deploy/README.md does not attach the sidecar policy to the role: want the command\n  %s", want)
	}
}
