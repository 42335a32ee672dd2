package platforms

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/dynafold/dynafold/host"
)

// TestX6_ECSTaskDefinition decodes docs/deploy/ecs/task-definition.json
// strictly into the input of ECS's RegisterTaskDefinition (the shape
// `aws ecs register-task-definition --cli-input-json` takes) and checks the
// sidecar container: essential, stopped with time to release its leases,
// health-checked by the host binary itself against the admin server's
// liveness route on the configured admin address; the application starts
// once the sidecar is healthy; the task role is the sidecar's role.
func TestX6_ECSTaskDefinition(t *testing.T) {
	b, err := os.ReadFile("../ecs/task-definition.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var td ecs.RegisterTaskDefinitionInput
	if err := dec.Decode(&td); err != nil {
		t.Fatalf("task-definition.json: %v", err)
	}
	if td.TaskRoleArn == nil || roleName(*td.TaskRoleArn) != sidecarRole {
		t.Errorf("taskRoleArn %v: want the role %s", td.TaskRoleArn, sidecarRole)
	}
	cfg, err := host.LoadConfig("../ecs/dynafold.json")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Admin == nil || cfg.Sidecar == nil {
		t.Fatal("ecs/dynafold.json needs an admin and a sidecar section")
	}

	var sc, app *types.ContainerDefinition
	for i := range td.ContainerDefinitions {
		c := &td.ContainerDefinitions[i]
		switch *c.Name {
		case "dynafold":
			sc = c
		case "app":
			app = c
		}
	}
	if sc == nil || app == nil {
		t.Fatal("want the containers dynafold and app")
	}
	if want := []string{"run", "--config", "/dynafold/dynafold.json"}; !slices.Equal(sc.Command, want) {
		t.Errorf("sidecar command %v, want %v (the Dockerfile ships the configuration there)", sc.Command, want)
	}
	if sc.Essential == nil || !*sc.Essential {
		t.Error("the sidecar must be essential: a task whose projection stopped is replaced")
	}
	if sc.StopTimeout == nil || *sc.StopTimeout < 30 {
		t.Errorf("stopTimeout %v: leave SIGTERM time to finish the batch in flight and release the leases (30 s or more)", sc.StopTimeout)
	}
	hc := sc.HealthCheck
	if hc == nil || len(hc.Command) != 5 || hc.Command[0] != "CMD" || hc.Command[1] != "/dynafold/host" || hc.Command[2] != "healthcheck" || hc.Command[3] != "--url" {
		t.Fatalf("health check %+v: want [CMD /dynafold/host healthcheck --url URL] (the image has no shell or curl)", hc)
	}
	u, err := url.Parse(hc.Command[4])
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != cfg.Admin.Addr {
		t.Errorf("health check asks %s, the admin server listens on %s", u.Host, cfg.Admin.Addr)
	}
	if u.Path != "/healthz" {
		t.Errorf("health check path %s: want the liveness route /healthz (readiness waits for a lease round)", u.Path)
	}
	local, err := net.ResolveTCPAddr("tcp", u.Host)
	if err != nil {
		t.Fatalf("health check URL %s: %v", u, err)
	}
	assertAdminRoute(t, u.Path, u.Host, local)
	ok := false
	for _, d := range app.DependsOn {
		ok = ok || *d.ContainerName == "dynafold" && d.Condition == types.ContainerConditionHealthy
	}
	if !ok {
		t.Error("app must depend on dynafold being HEALTHY, so it starts after the sidecar and stops before it")
	}
}
