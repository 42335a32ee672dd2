// Package platforms holds the tests that decode the deployment examples in
// docs/deploy/kubernetes and docs/deploy/ecs strictly into the platforms'
// own Go types (k8s.io/api, aws-sdk-go-v2/service/ecs) and check them
// against the host: the probes against the admin server's routes and
// address, the configuration against host.Config, the roles against the
// sidecar's IAM policy. It also parses the alerting rules `host alerts`
// writes with Prometheus's own rule parser (model/rulefmt) and checks they
// read only the metrics host run exports.
package platforms
