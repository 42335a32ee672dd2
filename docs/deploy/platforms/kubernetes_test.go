package platforms

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/dynafold/dynafold/host"
)

// k8sObjects decodes every document of a multi-document YAML file
// strictly (unknown fields refused) into the type its kind names.
type k8sObjects struct {
	serviceAccounts []corev1.ServiceAccount
	configMaps      []corev1.ConfigMap
	deployments     []appsv1.Deployment
}

func readK8s(t *testing.T, path string) k8sObjects {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out k8sObjects
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var meta struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s document %d: %v", path, i, err)
		}
		strict := func(v any) {
			if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
				t.Fatalf("%s document %d (%s %s): %v", path, i, meta.APIVersion, meta.Kind, err)
			}
		}
		switch meta.APIVersion + " " + meta.Kind {
		case "v1 ServiceAccount":
			var v corev1.ServiceAccount
			strict(&v)
			out.serviceAccounts = append(out.serviceAccounts, v)
		case "v1 ConfigMap":
			var v corev1.ConfigMap
			strict(&v)
			out.configMaps = append(out.configMaps, v)
		case "apps/v1 Deployment":
			var v appsv1.Deployment
			strict(&v)
			out.deployments = append(out.deployments, v)
		default:
			t.Fatalf("%s document %d: kind %s %s is not one this test knows", path, i, meta.APIVersion, meta.Kind)
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestX6_KubernetesNativeSidecar decodes docs/deploy/kubernetes into the
// Kubernetes API types and checks the pod: the sidecar is a native sidecar
// (an init container with restartPolicy Always) after the plugin copy and
// before the application; it runs host run on the ConfigMap's
// configuration, which the host accepts; its probes name the admin
// server's liveness and readiness routes on the port the configuration's
// admin address listens on; each pod has its own worker id; the plugin
// path is on the volume the plugin container fills.
func TestX6_KubernetesNativeSidecar(t *testing.T) {
	objs := readK8s(t, "../kubernetes/sidecar.yaml")
	if len(objs.deployments) != 1 || len(objs.configMaps) != 1 || len(objs.serviceAccounts) != 1 {
		t.Fatalf("want one Deployment, ConfigMap and ServiceAccount; got %d, %d, %d", len(objs.deployments), len(objs.configMaps), len(objs.serviceAccounts))
	}
	dep, cm, sa := objs.deployments[0], objs.configMaps[0], objs.serviceAccounts[0]
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("pod service account %q, the manifest's is %q", pod.ServiceAccountName, sa.Name)
	}
	if role := sa.Annotations["eks.amazonaws.com/role-arn"]; roleName(role) != sidecarRole {
		t.Errorf("service account role %q: want the role %s (docs/deploy/iam/sidecar.json)", role, sidecarRole)
	}

	var sidecar *corev1.Container
	sidecarAt, pluginAt := -1, -1
	for i := range pod.InitContainers {
		c := &pod.InitContainers[i]
		switch {
		case c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways:
			sidecar, sidecarAt = c, i
		case c.Name == "plugin":
			pluginAt = i
		}
	}
	if sidecar == nil {
		t.Fatal("no init container with restartPolicy Always: the sidecar is not a native sidecar")
	}
	if pluginAt < 0 || pluginAt > sidecarAt {
		t.Errorf("the plugin init container (at %d) must run before the sidecar (at %d)", pluginAt, sidecarAt)
	}
	if len(pod.Containers) == 0 {
		t.Error("no application container beside the sidecar")
	}

	// host run --config PATH --worker-id $(POD_NAME)
	args := strings.Join(sidecar.Args, " ")
	m := regexp.MustCompile(`^run --config (\S+) --worker-id \$\((\w+)\)$`).FindStringSubmatch(args)
	if m == nil {
		t.Fatalf("sidecar args %q: want run --config FILE --worker-id $(POD_NAME)", args)
	}
	cfgPath, idVar := m[1], m[2]
	if v := envVar(sidecar.Env, idVar); v == nil || v.ValueFrom == nil || v.ValueFrom.FieldRef == nil || v.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("--worker-id $(%s): the variable must be the pod's name (fieldRef metadata.name), so every pod has its own", idVar)
	}
	mount := mountOf(sidecar.VolumeMounts, cfgPath)
	if mount == nil {
		t.Fatalf("--config %s is on no volume of the sidecar", cfgPath)
	}
	vol := volume(pod.Volumes, mount.Name)
	if vol == nil || vol.ConfigMap == nil || vol.ConfigMap.Name != cm.Name {
		t.Fatalf("--config %s: volume %q is not the ConfigMap %s", cfgPath, mount.Name, cm.Name)
	}
	rel, _ := filepath.Rel(mount.MountPath, cfgPath)
	cfgJSON, ok := cm.Data[rel]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %q", cm.Name, rel)
	}
	cfg, err := host.ParseConfig([]byte(cfgJSON))
	if err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	if cfg.Sidecar == nil || cfg.Admin == nil {
		t.Fatalf("the configuration needs a sidecar and an admin section: %+v %+v", cfg.Sidecar, cfg.Admin)
	}

	// The plugin file is on the volume the plugin container fills.
	plugin := cfg.Projections[0].Plugin
	pm := mountOf(sidecar.VolumeMounts, plugin)
	if pm == nil {
		t.Fatalf("plugin %s is on no volume of the sidecar", plugin)
	}
	copied := false
	for _, c := range pod.InitContainers[:max(pluginAt, 0)+1] {
		for _, vm := range c.VolumeMounts {
			if vm.Name == pm.Name && strings.Contains(strings.Join(c.Command, " "), filepath.Join(vm.MountPath, filepath.Base(plugin))) {
				copied = true
			}
		}
	}
	if !copied {
		t.Errorf("no init container before the sidecar writes %s onto volume %q", filepath.Base(plugin), pm.Name)
	}

	// Probes: the admin server's routes, on the admin address's port.
	_, port, err := net.SplitHostPort(cfg.Admin.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Admin.AllowNonLoopback || !strings.HasPrefix(cfg.Admin.Addr, "0.0.0.0:") {
		t.Errorf("admin %+v: the kubelet probes the pod's address, so the admin server must listen on 0.0.0.0 with allowNonLoopback", cfg.Admin)
	}
	probes := map[string]*corev1.Probe{"startup": sidecar.StartupProbe, "liveness": sidecar.LivenessProbe, "readiness": sidecar.ReadinessProbe}
	wantPath := map[string]string{"startup": "/healthz", "liveness": "/healthz", "readiness": "/readyz"}
	for name, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet on the admin server", name)
			continue
		}
		if got := containerPort(t, sidecar, p.HTTPGet.Port); got != port {
			t.Errorf("%s probe port %s, the admin server listens on %s", name, got, port)
		}
		if p.HTTPGet.Path != wantPath[name] {
			t.Errorf("%s probe path %s, want %s", name, p.HTTPGet.Path, wantPath[name])
		}
		assertAdminRoute(t, p.HTTPGet.Path, kubeletHost(p.HTTPGet, port), podIP)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 30 {
		t.Errorf("terminationGracePeriodSeconds %v: leave SIGTERM time to finish the batch in flight and release the leases (30 s or more)", g)
	}
}

const sidecarRole = "dynafold-sidecar"

func roleName(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }

func envVar(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}

func mountOf(mounts []corev1.VolumeMount, path string) *corev1.VolumeMount {
	for i := range mounts {
		if strings.HasPrefix(path, strings.TrimSuffix(mounts[i].MountPath, "/")+"/") {
			return &mounts[i]
		}
	}
	return nil
}

func volume(vols []corev1.Volume, name string) *corev1.Volume {
	for i := range vols {
		if vols[i].Name == name {
			return &vols[i]
		}
	}
	return nil
}

// containerPort resolves a probe's port (a number or a port name) to the
// container's port number.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) string {
	t.Helper()
	if p.Type == intstr.Int {
		return strconv.Itoa(int(p.IntVal))
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return strconv.Itoa(int(cp.ContainerPort))
		}
	}
	t.Errorf("probe port %q names no port of container %s", p.StrVal, c.Name)
	return ""
}

// podIP stands for the pod's address: the kubelet probes it.
var podIP = &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 9100}

// kubeletHost is the Host header the kubelet sends for a probe: a Host
// among its httpHeaders, else its host (default: the pod's IP) and port.
func kubeletHost(g *corev1.HTTPGetAction, port string) string {
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			return h.Value
		}
	}
	h := g.Host
	if h == "" {
		h = podIP.IP.String()
	}
	return net.JoinHostPort(h, port)
}

// assertAdminRoute checks that the admin server serves path to a client
// sending Host host over a connection that arrived on local: /healthz
// answers 200 and /readyz answers (503 before the first lease round), not
// 404, nor 421 (a Host the admin server does not answer).
func assertAdminRoute(t *testing.T, path, host string, local net.Addr) {
	t.Helper()
	rec := httptest.NewRecorder()
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, local)
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+path, nil)
	adminHandler(t).ServeHTTP(rec, req)
	if rec.Code == http.StatusNotFound || rec.Code == http.StatusMisdirectedRequest || rec.Code/100 == 3 {
		t.Errorf("the admin server answers %s with Host %s with %d: the probe names no route of it, or a host it does not answer (%s)", path, host, rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
	}
}
